// Work that falls due at a time (a refund settling, a payout moving on, a subscription charging):
// a binary min-heap on the due time, so "what is due by now?" costs O(1) when nothing is and
// O(log n) per item that is, whatever the number of records. Entries are checked when they come
// out (`stillDue`): a record settled early by the operator, or rescheduled, is simply skipped.
export class DueQueue<T> {
  private heap: { at: number; item: T }[] = [];

  constructor(private readonly stillDue: (item: T, at: number) => boolean) {}

  get size(): number {
    return this.heap.length;
  }

  /** Schedules `item` at `at` (ms since the epoch); NaN (no due time) schedules nothing. */
  push(item: T, at: number): void {
    if (!Number.isFinite(at)) return;
    const heap = this.heap;
    heap.push({ at, item });
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (heap[parent]!.at <= heap[i]!.at) break;
      [heap[parent], heap[i]] = [heap[i]!, heap[parent]!];
      i = parent;
    }
  }

  /** The next item due by `now` (earliest first), or undefined; stale entries are dropped on the way. */
  popDue(now: number): T | undefined {
    while (this.heap.length && this.heap[0]!.at <= now) {
      const { at, item } = this.pop();
      if (this.stillDue(item, at)) return item;
    }
    return undefined;
  }

  /** Whether the earliest entry is due by `now` (it may be stale: popDue then finds nothing). */
  dueBy(now: number): boolean {
    return this.heap.length > 0 && this.heap[0]!.at <= now;
  }

  /** When the earliest item still due falls due (stale entries are dropped on the way), or undefined. */
  nextAt(): number | undefined {
    while (this.heap.length && !this.stillDue(this.heap[0]!.item, this.heap[0]!.at)) this.pop();
    return this.heap[0]?.at;
  }

  private pop(): { at: number; item: T } {
    const heap = this.heap;
    const top = heap[0]!;
    const last = heap.pop()!;
    if (heap.length) {
      heap[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let least = i;
        if (l < heap.length && heap[l]!.at < heap[least]!.at) least = l;
        if (r < heap.length && heap[r]!.at < heap[least]!.at) least = r;
        if (least === i) break;
        [heap[least], heap[i]] = [heap[i]!, heap[least]!];
        i = least;
      }
    }
    return top;
  }
}
