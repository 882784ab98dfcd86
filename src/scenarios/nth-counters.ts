// How many times an operation was called for one order (a rule's `nth`), for the most recent
// orders only. Two generations: counts go into the young map; when it is half the limit, it becomes
// the old one and the oldest generation is dropped. A count still in use moves to the young map,
// so what is dropped is what was not used for the longest while, at O(1) per call. (A single
// Map re-inserted on every call and trimmed from its front slowed down as deletions piled up at
// its head: 24% of a 50-order capture's CPU.)
export class NthCounters {
  private young = new Map<string, number>();
  private old = new Map<string, number>();
  /** with a shared store: the counts changed since they were last taken (undefined: not tracked) */
  private changed: Map<string, number> | undefined;
  constructor(private readonly limit: number) {}

  /** counts changed since the last call (tracking starts with the first call) */
  takeChanged(): [string, number][] {
    const out = this.changed ? [...this.changed] : [];
    this.changed = new Map();
    return out;
  }

  /** a count as another replica left it */
  set(key: string, n: number): void {
    this.young.set(key, n);
    this.rotate();
  }

  /** counts one more call for `key` and returns its number (1 for the first) */
  next(key: string): number {
    const n = (this.young.get(key) ?? this.old.get(key) ?? 0) + 1;
    this.young.set(key, n);
    this.changed?.set(key, n);
    this.rotate();
    return n;
  }

  private rotate(): void {
    if (this.young.size >= this.limit / 2) {
      this.old = this.young;
      this.young = new Map();
    }
  }

  get size(): number {
    let n = this.young.size;
    for (const key of this.old.keys()) if (!this.young.has(key)) n++;
    return n;
  }

  /** forgets every count, or those whose key starts with `prefix` */
  clear(prefix?: string): void {
    if (prefix === undefined) {
      this.young.clear();
      this.old.clear();
      return;
    }
    for (const map of [this.young, this.old]) for (const key of map.keys()) if (key.startsWith(prefix)) map.delete(key);
  }
}
