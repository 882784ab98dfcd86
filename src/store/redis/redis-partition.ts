// One merchant of the shared store (redis-store.ts): its records in this replica's memory, with the
// same indexes as the embedded store, and its turn in Redis. A unit of work for the merchant takes
// the turn (a lock with a lease), which brings this copy up to date with the commits other replicas
// made; the unit's commits write what it changed and announce it on the merchant's stream. Units of
// different merchants never wait for each other, on this replica or any other.
import { randomBytes } from "node:crypto";
import { forgetFullNumber } from "../../domain/card-on-file.js";
import { createIds, type Ids } from "../../domain/ids.js";
import { KEY_FIELD, type Collection } from "../../domain/types.js";
import { createRepository, type Repository } from "../../domain/records.js";
import { COLLECTIONS, INSTALL, acquireKeys, commitKeys, installKeys, resolveKeys, type PartitionKeys, type Scripts } from "./redis-scripts.js";
import { createTurns, leaseKeeper, type Turns } from "./turns.js";
import { timing } from "../../config/timings.js";
import { asUnavailable, StoreUnavailable, TurnLost } from "../store.js";
import { STATE_VERSION, type State } from "../../domain/types.js";
import type { Link } from "./redis-link.js";
import { NTH_COUNTER_LIMIT, type ScenarioRegistry } from "../../scenarios/registry.js";

/** How long a commit that did not land stays fenced off (a command delayed in the network longer than this is not expected). */
const FENCE_MS = 60_000;

/** What a partition needs from the store that holds it. */
export interface PartitionContext {
  link: Link;
  scripts: Scripts;
  /** the keys of a merchant's partition */
  keysOf(merchantId: string): PartitionKeys;
  /** this replica's token: whose turn it is */
  token: string;
  /** the seed of the sandbox and the current generation (a reset of everything starts a new one) */
  seed(): string;
  generation(): string;
  /** reads the settings again: whether the generation moved (a reset of everything elsewhere) */
  generationMoved(): Promise<boolean>;
  /** the merchant's initial state: its fixture records, or nothing for another merchant */
  initial(merchantId: string): State;
  scenarios(): ScenarioRegistry | undefined;
  /** does a scenario name this card number (an older Sandgate's full number on file becomes a fingerprint, or nothing) */
  namesCard(number: string): boolean;
  /** hands the nth counts changed since the last call to the partitions they belong to */
  routeCounts(): void;
  /** runs a whole load of a merchant when one of the few slots for it is free */
  loading<T>(work: () => Promise<T>): Promise<T>;
  /** a merchant was loaded whole from Redis */
  loaded(): void;
  /** with each commit: ids that became findable, and when the merchant's earliest work falls due (null: nothing; undefined: unchanged) */
  indexed(merchantId: string, where: [string, string][], dueAt: number | null | undefined, installed?: boolean): Promise<void>;
}

/** An install of this many records or more goes on a connection of its own (Link.bulk). */
const BULK_RECORDS = 10_000;
/** records written out between two turns of the event loop, in a large install */
const YIELD_EVERY = 2_000;

const COLLECTION_NUMBER = new Map(COLLECTIONS.map((c, i) => [c, i + 1]));

/** One commit as announced on the merchant's stream (records by collection number, from 1). */
interface Entry {
  r: [number, Record<string, unknown>][];
  x: [Collection, string][];
  counters?: Record<string, number>;
  nth: [string, number][];
}

/** The kinds of record found by id alone, and the field of each that names one (redis-store's `where`). */
const FINDABLE: { c: Collection; kind: string; field: string }[] = [
  { c: "transactions", kind: "transaction", field: "transaction_id" },
  { c: "transactions", kind: "page", field: "page_id" },
  { c: "refunds", kind: "refund", field: "refund_reference_id" },
  { c: "payouts", kind: "payout", field: "transaction_id" },
  { c: "subscriptions", kind: "subscription", field: "recurring_id" },
  { c: "notifications", kind: "notification", field: "notification_id" },
];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** commits sent by this process: with the replica's token, each commit's fence */
let fences = 0;

export class Partition {
  readonly keys: PartitionKeys;
  state: State;
  records: Repository;
  ids: Ids;
  /** the installation this copy holds ("" = nothing yet: load it) and the last commit applied */
  epoch = "";
  version = 0;
  /** nth counts changed by this merchant's units, not yet written */
  nth: [string, number][] = [];
  /** ids already in `where`, so each is written there once */
  private readonly found = new Set<string>();
  private lastCounters = "{}";
  private lastDueAt: number | null | undefined;
  readonly turns: Turns;
  /** when a unit last used it (least recently used partitions are dropped first) */
  usedAt = 0;
  /** renews the lease while this replica holds the turn */
  private readonly lease: ReturnType<typeof leaseKeeper>;

  constructor(
    readonly merchantId: string,
    private readonly ctx: PartitionContext,
  ) {
    this.keys = ctx.keysOf(merchantId);
    this.lease = leaseKeeper(ctx.scripts.renew, this.keys.lock, ctx.token);
    this.state = ctx.initial(merchantId);
    this.records = createRepository(this.state);
    this.ids = createIds(`${ctx.seed()}|${merchantId}`, this.state.counters);
    this.turns = createTurns(
      () => this.acquire(),
      () =>
        this.write(true).catch(() => {
          this.epoch = ""; // what this copy holds may differ from Redis now: load it whole next turn
          return this.releaseTurn();
        }),
    );
  }

  /** how many records it holds (the store keeps a bounded number in memory) */
  get size(): number {
    let n = 0;
    for (const c of COLLECTIONS) n += this.state[c].length;
    return n;
  }

  releaseTurn(): Promise<void> {
    this.lease.stop();
    return this.ctx.scripts.release([this.keys.lock], [this.ctx.token]).then(
      () => undefined,
      () => undefined,
    );
  }

  /** Takes the merchant's turn (waiting while another replica has it) and brings this copy up to date. */
  private async acquire(): Promise<void> {
    for (let waited = 0; ; waited++) {
      let reply: (string | number)[];
      try {
        reply = (await this.ctx.scripts.acquire(acquireKeys(this.keys), [
          this.ctx.token,
          timing("leaseMs"),
          this.ctx.generation(),
          this.epoch,
          this.version,
        ])) as (string | number)[];
      } catch (err) {
        throw new StoreUnavailable((err as Error).message);
      }
      const status = Number(reply[0]);
      if (status === 0) {
        await sleep(waited < 20 ? 1 : 5);
        continue;
      }
      this.lease.keep();
      try {
        if (status === 3) {
          // a reset of everything on another replica may have begun a generation this one has not read
          // yet: installing under the old one would wipe what was made since. Asked again under the new one.
          if (await this.ctx.generationMoved()) continue;
          await this.install(this.ctx.initial(this.merchantId));
        } else await this.take(reply);
      } catch (err) {
        this.epoch = "";
        await this.releaseTurn();
        throw asUnavailable(err);
      }
      return;
    }
  }

  /** What ACQUIRE answered (with or without the turn): the commits missed are applied, or the merchant is loaded whole. */
  take(reply: (string | number)[]): Promise<void> | void {
    const status = Number(reply[0]);
    if (status === 2) return this.load(String(reply[1]), Number(reply[2]));
    if (status !== 1) return;
    this.apply(reply.slice(3) as string[]);
    this.version = Number(reply[2]);
  }

  /** Applies the commits another replica made since this copy's version. */
  private apply(texts: string[]): void {
    const scenarios = this.ctx.scenarios();
    for (const text of texts) {
      const entry = JSON.parse(text) as Entry;
      for (const [c, record] of entry.r) {
        if (COLLECTIONS[c - 1] === "tokens") forgetFullNumber(record, this.ctx.namesCard);
        this.records.apply(COLLECTIONS[c - 1]!, record);
      }
      for (const [c, k] of entry.x) this.records.forget(c, k);
      if (entry.counters) {
        Object.assign(this.state.counters, entry.counters);
        this.lastCounters = JSON.stringify(this.state.counters);
      }
      for (const [k, n] of entry.nth) scenarios?.setCount(k, n);
    }
  }

  /** A new copy of the merchant from Redis. */
  async load(epoch: string, version: number): Promise<void> {
    const { link, scenarios } = { link: this.ctx.link, scenarios: this.ctx.scenarios() };
    const client = link.client;
    const [counters, nthOld, nthYoung] = await link.again(() =>
      Promise.all([client.get(this.keys.counters), client.hgetall(this.keys.nthOld), client.hgetall(this.keys.nthYoung)]),
    );
    const next = { version: STATE_VERSION, seed: this.ctx.seed(), counters: JSON.parse(counters ?? "{}") } as State;
    await this.ctx.loading(() =>
      Promise.all(
        COLLECTIONS.map(async (c, i) => {
          const keys = await link.again(() => client.zrange(this.keys.order[i]!, "0", "-1"));
          const list: object[] = [];
          for (let at = 0; at < keys.length; at += 500) {
            const values = await link.again(() => client.hmget(this.keys.records[i]!, ...keys.slice(at, at + 500)));
            for (const v of values) if (v !== null) list.push(JSON.parse(v) as object);
          }
          (next as unknown as Record<string, object[]>)[c] = list;
        }),
      ),
    );
    this.replace(next);
    // an older Sandgate kept full card numbers on file: gone here, and from Redis with this turn's write
    for (const token of next.tokens) if (forgetFullNumber(token, this.ctx.namesCard)) this.records.changed("tokens", token);
    this.epoch = epoch;
    this.version = version;
    this.ctx.loaded();
    if (scenarios) {
      scenarios.resetCounters(this.merchantId);
      for (const [k, n] of [...Object.entries(nthOld), ...Object.entries(nthYoung)]) scenarios.setCount(k, Number(n));
    }
  }

  private replace(next: State): void {
    this.state = next;
    this.records = createRepository(next);
    this.ids = createIds(`${this.ctx.seed()}|${this.merchantId}`, next.counters);
    this.lastCounters = JSON.stringify(next.counters);
    this.found.clear();
    this.lastDueAt = undefined;
    this.nth = [];
  }

  /** Writes `next` as the merchant's whole state under a new epoch (first use, reset); the caller holds the turn. */
  async install(next: State): Promise<void> {
    const args: (string | number)[] = [];
    let n = 0;
    for (const c of COLLECTIONS) {
      for (const record of next[c] as unknown as Record<string, unknown>[]) {
        args.push(COLLECTION_NUMBER.get(c)!, String(record[KEY_FIELD[c]]), JSON.stringify(record));
        // a large merchant takes a while to write out: the event loop is let go now and then, so the
        // lease keeper renews the turn meanwhile (else, on a busy machine, the turn lapses before the install)
        if (++n % YIELD_EVERY === 0) await new Promise((resolve) => setImmediate(resolve));
      }
    }
    const epoch = `${this.ctx.generation()}/${randomBytes(6).toString("hex")}`;
    const argv = [this.ctx.token, timing("leaseMs"), epoch, JSON.stringify(next.counters), n, ...args];
    // a large merchant's install runs longer than the link lets a connection be silent
    const done = (await (n >= BULK_RECORDS
      ? this.ctx.link.bulk(INSTALL, installKeys(this.keys), argv)
      : this.ctx.scripts.install(installKeys(this.keys), argv))) as string | number;
    if (typeof done !== "string") throw new StoreUnavailable("this replica's turn ran out before the merchant was installed");
    // its counters go on from the highest ever issued: after a reset no id comes back
    this.replace({ ...next, counters: JSON.parse(done) as State["counters"] });
    this.ctx.scenarios()?.resetCounters(this.merchantId);
    this.epoch = epoch;
    this.version = 0;
    const all = COLLECTIONS.flatMap((c) => (next[c] as object[]).map((v) => ({ c, v })));
    await this.ctx.indexed(this.merchantId, this.findable(all), this.dueAt(), true);
  }

  /** The `where` entries of records not written there yet. */
  private findable(changed: Iterable<{ c: Collection; v: object }>): [string, string][] {
    const out: [string, string][] = [];
    for (const { c, v } of changed) {
      for (const { c: of, kind, field } of FINDABLE) {
        const id = (v as Record<string, unknown>)[field];
        if (of !== c || typeof id !== "string" || id === "") continue;
        const k = `${kind}:${id}`;
        if (this.found.has(k)) continue;
        this.found.add(k);
        out.push([k, this.merchantId]);
      }
    }
    return out;
  }

  /** When the merchant's earliest work falls due, if that changed since last said: a time, or null for nothing. */
  private dueAt(): number | null | undefined {
    const at = this.records.nextDueAt() ?? null;
    if (at === this.lastDueAt) return undefined;
    this.lastDueAt = at;
    return at;
  }

  /** Writes what this copy changed; with `release`, gives the turn up too. */
  async write(release: boolean): Promise<void> {
    this.ctx.routeCounts();
    const changes = this.records.takeChanges();
    const removed = this.records.takeRemoved();
    const counters = JSON.stringify(this.state.counters);
    const nth = this.nth;
    this.nth = [];
    const countersChanged = counters !== this.lastCounters;
    if (!changes.length && !removed.length && !countersChanged && !nth.length) {
      if (release) await this.releaseTurn();
      return;
    }
    const args: (string | number)[] = [];
    args.push(changes.length);
    for (const { c, v } of changes) args.push(COLLECTION_NUMBER.get(c)!, String((v as Record<string, unknown>)[KEY_FIELD[c]]), JSON.stringify(v));
    args.push(removed.length);
    for (const { c, k } of removed) args.push(COLLECTION_NUMBER.get(c)!, k);
    args.push(nth.length);
    for (const [k, n] of nth) args.push(k, n);
    const rest = `"x":${JSON.stringify(removed.map(({ c, k }) => [c, k]))},"nth":${JSON.stringify(nth)}${countersChanged ? `,"counters":${counters}` : ""}`;
    const where = this.findable(changes);
    const [next] = await Promise.all([
      this.commit((fence) => [
        this.ctx.token,
        timing("leaseMs"),
        release ? 1 : 0,
        NTH_COUNTER_LIMIT / 2,
        rest,
        countersChanged ? counters : "",
        fence,
        ...args,
      ]),
      this.ctx.indexed(this.merchantId, where, this.dueAt()),
    ]);
    if (release) this.lease.stop();
    if (next < 0) throw new TurnLost("this replica's turn ran out before its changes were written");
    this.version = next;
    this.lastCounters = counters;
  }

  /**
   * Sends COMMIT with a fresh fence, and when its reply is lost asks (on the new connection)
   * whether that fence landed: yes → the version it made, as if the reply had come; no → the fence
   * is declared dead (a late copy of the command is refused) and the commit is sent again under a
   * new one, the turn still being this replica's. Never twice, never reported failed when it happened.
   */
  private async commit(args: (fence: string) => (string | number)[]): Promise<number> {
    const base = this.version;
    for (let attempt = 1; ; attempt++) {
      const fence = `${this.ctx.token.slice(0, 8)}${(++fences).toString(36)}`;
      const sentOn = this.ctx.link.connection;
      try {
        return Number(await this.ctx.scripts.commit(commitKeys(this.keys), args(fence)));
      } catch (err) {
        await this.ctx.link.recover(err, attempt, sentOn);
        const landed = Number(await this.ctx.scripts.resolve(resolveKeys(this.keys), [this.epoch, base, fence, FENCE_MS]));
        if (landed > 0) return landed;
        if (landed < 0) throw new StoreUnavailable("the connection to Redis was lost while a commit was on it, and whether it was written cannot be told");
      }
    }
  }
}
