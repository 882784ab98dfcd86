// The merchants a replica holds in memory (redis-store.ts): each merchant's partition, most recently
// served last; the least recently served dropped while more records than allowed are held; each
// partition's group commit; a merchant's whole loads a few at a time.
import { createSlots } from "../../base/slots.js";
import { groupCommit, asUnavailable } from "../store.js";
import type { ScenarioRegistry } from "../../scenarios/registry.js";
import { Partition, type PartitionContext } from "./redis-partition.js";
import { acquireKeys } from "./redis-scripts.js";
import { timing } from "../../config/timings.js";

/**
 * Records a replica keeps in memory (its most recently served merchants; those in use are always
 * kept). A stored payment takes ~1.4 KB of heap and the heap may grow half again before a full
 * collection: 30,000 keep a replica under 300 MB (scripts/bench/replica-memory.ts).
 */
export const HELD_RECORDS = 30_000;

/** Merchants loaded whole from Redis at once: each holds its records twice (text and objects) while it loads. */
const LOADS_AT_ONCE = 4;

/** What a partition needs from the store, but what the held merchants give it (their loads, their counts). */
type StoreContext = Omit<PartitionContext, "loading" | "loaded" | "routeCounts">;

export class HeldMerchants {
  private readonly partitions = new Map<string, Partition>();
  private readonly commits = new WeakMap<Partition, () => Promise<void>>();
  private readonly ctx: PartitionContext;
  private trimSoon: NodeJS.Immediate | undefined;
  private readonly trimmer: NodeJS.Timeout;

  /**
   * `heldRecords`: how many records may stay in memory; `reading`: a unit reads every merchant now
   * (none is dropped meanwhile); `scenarios`: whose per-merchant counters go with a merchant dropped.
   */
  constructor(
    base: StoreContext,
    private readonly heldRecords: number,
    private readonly reading: () => boolean,
    private readonly scenarios: () => ScenarioRegistry | undefined,
  ) {
    const loadSlots = createSlots(LOADS_AT_ONCE);
    this.ctx = {
      ...base,
      async loading<T>(work: () => Promise<T>): Promise<T> {
        await loadSlots.acquire();
        try {
          return await work();
        } finally {
          loadSlots.release();
        }
      },
      // a merchant came in whole: the least recently served may have to go now, not at the next tick
      loaded: () => {
        if (!this.trimSoon) this.trimSoon = setImmediate(() => ((this.trimSoon = undefined), this.trim()));
      },
      routeCounts: () => {
        for (const [k, n] of this.scenarios()?.takeCounts() ?? []) this.partitions.get(k.slice(0, k.indexOf("|")))?.nth.push([k, n]);
      },
    };
    this.trimmer = setInterval(() => this.trim(), 1_000);
    this.trimmer.unref();
  }

  /** The merchant's partition, made most recently used. */
  partition(merchantId: string): Partition {
    let p = this.partitions.get(merchantId);
    if (p) this.partitions.delete(merchantId);
    else p = new Partition(merchantId, this.ctx);
    this.partitions.set(merchantId, p);
    p.usedAt = Date.now();
    return p;
  }

  /** The partition held for a merchant, if one is. */
  get(merchantId: string): Partition | undefined {
    return this.partitions.get(merchantId);
  }

  all(): Partition[] {
    return [...this.partitions.values()];
  }

  /** The merchants named brought up to date here, without their turns (a unit that reads every merchant). */
  async catchUp(merchants: string[], generation: string): Promise<void> {
    await Promise.all(
      merchants.map(async (m) => {
        const p = this.partition(m);
        if (p.turns.busy) return; // its unit is here: it is up to date
        const sent = { epoch: p.epoch, version: p.version };
        const reply = (await this.ctx.scripts.acquire(acquireKeys(p.keys), ["", timing("leaseMs"), generation, p.epoch, p.version])) as (string | number)[];
        // a unit took it meanwhile (and so brought it up to date), or another catch-up did
        if (p.turns.busy || p.epoch !== sent.epoch || p.version !== sent.version) return;
        if (Number(reply[0]) === 3) {
          // not installed yet: held again as its fixtures
          if (p.epoch !== "") this.partitions.set(m, new Partition(m, this.ctx));
          return;
        }
        await p.take(reply);
      }),
    );
  }

  /** The partition's group commit: units that end together write once. */
  commitOf(p: Partition): () => Promise<void> {
    let commit = this.commits.get(p);
    if (!commit)
      this.commits.set(
        p,
        (commit = groupCommit(async () => {
          try {
            await p.write(false);
          } catch (err) {
            this.spoil(p);
            throw asUnavailable(err);
          }
        })),
      );
    return commit;
  }

  /** What this copy holds may differ from Redis now: it is loaded whole next turn, and no unit joins this one. */
  spoil(p: Partition): void {
    p.epoch = "";
    p.turns.spoil();
  }

  /** Drops the merchants served least recently while more records than allowed are held (not while a unit reads every merchant). */
  private trim(): void {
    if (this.reading()) return;
    let held = 0;
    for (const p of this.partitions.values()) held += p.size;
    for (const p of this.partitions.values()) {
      if (held <= this.heldRecords) break;
      if (p.turns.busy) continue;
      held -= p.size;
      this.forget(p);
    }
  }

  private forget(p: Partition): void {
    this.partitions.delete(p.merchantId);
    this.scenarios()?.resetCounters(p.merchantId);
  }

  /** A new generation (a reset of everything): every merchant held is dropped, to be installed again. */
  dropAll(): void {
    for (const p of this.all()) if (!p.turns.busy) this.forget(p);
    for (const p of this.partitions.values()) p.epoch = "";
  }

  /** No more trimming: the store closes. */
  stop(): void {
    clearInterval(this.trimmer);
    clearImmediate(this.trimSoon);
  }
}
