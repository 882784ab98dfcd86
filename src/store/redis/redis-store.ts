// The shared store (--redis-url): one sandbox for any number of replicas, partitioned by merchant.
// Redis holds the state (redis-scripts.ts lists the keys); a replica keeps the merchants it served
// recently in memory (redis-partition.ts), each with the same indexes as the embedded store, so
// handlers stay synchronous and unchanged. Each unit is handed its own view (view(): the merchant's
// partition, none, or every merchant's to read) with its commit and the units opened inside it;
// nothing is looked up from the async context the code runs in.
//
// A unit of work names the merchant it serves and takes that merchant's turn: units of different
// merchants run at the same time, on this replica or any other, and a replica that dies holding a
// turn delays only that merchant, for its lease. What is sandbox-wide (the scenario choice, the
// clock, the seed, the generation a reset of everything starts) is a versioned settings record:
// every unit checks its version as it takes its turn (in the same round trip), and it changes only
// in a unit that names no merchant, under its own turn. Such a unit reads every merchant's records
// (the dashboard's lists) and changes none. The connection to Redis, and what a command does when
// it fails half-way (sent again, or a commit resolved by its fence), is redis-link.ts's.
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { packageVersion } from "../../base/paths.js";
import { connect } from "./redis-link.js";
import { sharedRequests } from "./shared-requests.js";
import { answerRollCall } from "./roll-call.js";
import { createIds } from "../../domain/ids.js";
import { loadFixtures } from "../fixtures/fixtures.js";
import { stateFromFixtures } from "../fixtures/initial-state.js";
import { mergedRecords, mergedState } from "./merged-records.js";
import { createRepository, type Repository } from "../../domain/records.js";
import { Partition, type PartitionContext } from "./redis-partition.js";
import { defineScript, defineScripts } from "./redis-scripts.js";
import { LEASE_MS, leaseKeeper } from "./turns.js";
import { COLLECTIONS, DROP_OLD, SETTINGS_INIT, SETTINGS_WRITE, TAKE, acquireKeys, globalKeys, partitionKeys, installKeys } from "./redis-scripts.js";
import { createTurns } from "./turns.js";
import { createSlots } from "../../base/slots.js";
import { inspectLayoutOne, layoutAt, newerLayout, REDIS_LAYOUT, takeLayoutOne, type EarlierSandbox } from "./redis-layout.js";
import {
  endsOf,
  groupCommit,
  StoreError,
  StoreRefusal,
  StoreUnavailable,
  TurnLost,
  type SharedParts,
  type Shelf,
  type Store,
  type UnitScope,
  type Locatable,
} from "../store.js";
import type { State } from "../../domain/types.js";
import type { ScenarioChoice } from "../../scenarios/registry.js";

export interface RedisStoreOptions {
  url: string;
  prefix: string;
  fixturesDir: string;
  seed: string | undefined;
  /** --redis-cluster: `url` is a node of a Redis Cluster (the others are found from it) */
  cluster?: boolean | undefined;
  /** how many records a replica keeps in memory before it drops the merchants it served least recently */
  heldRecords?: number | undefined;
  /** does a scenario name this card number? (a merchant written by an older Sandgate keeps full numbers on file: they go as it loads) */
  namesCard?: ((number: string) => boolean) | undefined;
  /** told what the start did to the sandbox's layout (moved it from an earlier one, or found a newer one) */
  report?: ((level: "info" | "warn", message: string) => void) | undefined;
}

/** What replicas share besides records. */
interface Settings {
  clock_offset_ms: number;
  scenario: ScenarioChoice;
}

/** How long a closing replica waits for its units before it gives the turns back anyway. */
const CLOSE_WAIT_MS = 2_000;
/**
 * Records a replica keeps in memory (its most recently served merchants; those in use are always
 * kept). A stored payment takes ~1.4 KB of heap and the heap may grow half again before a full
 * collection: 30,000 keep a replica under 300 MB (scripts/bench/replica-memory.ts).
 */
export const HELD_RECORDS = 30_000;
/** Merchants loaded whole from Redis at once: each holds its records twice (text and objects) while it loads. */
const LOADS_AT_ONCE = 4;

/** The address without its password, for messages. */
const shown = (url: string) => url.replace(/\/\/([^@/]*)@/, "//***@");

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Where a unit runs: one merchant's partition, everything (read-only, with the settings' turn), or nothing. */
type Context = { partition: Partition } | { all: true; merged?: State } | { none: true };

/**
 * On a Cluster, braces in the prefix would be read as every key's hash tag: every key on one node
 * ("team{1}:"), or each key hashed whole and every script refused ("{}"). Refused before connecting.
 */
function checkPrefix(options: RedisStoreOptions): void {
  if (options.cluster && /[{}]/.test(options.prefix)) {
    throw new StoreError(
      `--redis-prefix "${options.prefix}" holds { or }: on a Redis Cluster they would choose the hash slot of every key; pick a prefix without braces`,
    );
  }
}

/** What Redis holds at the prefix, read without changing anything (`sandgate migrate --dry-run`). */
export async function inspectRedisStore(
  options: RedisStoreOptions,
): Promise<{ layout: number; merchants: number; records?: Record<string, number>; running?: boolean }> {
  checkPrefix(options);
  const global = globalKeys(options.prefix);
  const client = connect(options).client;
  client.on("error", () => undefined);
  try {
    await client
      .connect()
      .catch((err: Error) => Promise.reject(new StoreError(`cannot reach Redis at ${shown(options.url)} (${err.message}); start it, or check --redis-url`)));
    const layout = await layoutAt(client, options.prefix, global.settings);
    if (layout !== 1) return { layout, merchants: await client.scard(global.merchants) };
    const { records, running } = await inspectLayoutOne(client, options.prefix);
    return { layout, merchants: records.merchants ?? 0, records, running };
  } finally {
    client.disconnect();
  }
}

export async function openRedisStore(options: RedisStoreOptions): Promise<Store> {
  checkPrefix(options);
  const fixtures = loadFixtures(options.fixturesDir);
  const global = globalKeys(options.prefix);
  const link = connect(options);
  const { client, again } = link;
  let lastError: Error | undefined;
  // while running, what fails is reported by the commands that fail (503 I0050)
  client.on("error", (err: Error) => (lastError = err));
  try {
    await client.connect();
  } catch (err) {
    client.disconnect();
    const why = lastError ?? (err as Error);
    throw new StoreError(`cannot reach Redis at ${shown(options.url)} (${why.message}); start it, or check --redis-url`);
  }

  const scripts = defineScripts(link);
  const define = (name: string, lua: string) => defineScript(link, name, lua);
  const take = define("sandgateTake", TAKE);
  const settingsInit = define("sandgateSettingsInit", SETTINGS_INIT);
  const settingsWrite = define("sandgateSettingsWrite", SETTINGS_WRITE);
  const dropOld = define("sandgateDropOld", DROP_OLD);
  const token = randomBytes(12).toString("hex");
  const tag = token.slice(0, 6);
  const heldRecords = options.heldRecords ?? HELD_RECORDS;
  let parts: SharedParts | undefined;

  // the sandbox's settings as Redis has them (created on first use); a sandbox in an earlier layout is moved first
  let known: { v: number; seed: string; gen: string; json: string; layout: number };
  let earlier: EarlierSandbox | undefined;
  try {
    if ((await again(() => layoutAt(client, options.prefix, global.settings))) === 1)
      earlier = await takeLayoutOne(client, options.prefix, shown(options.url), options.namesCard ?? (() => false));
    const seed = earlier?.state.seed || options.seed || randomBytes(8).toString("hex");
    const flat = (await settingsInit([global.settings], [seed, randomBytes(6).toString("hex"), earlier?.settings ?? "", REDIS_LAYOUT])) as string[];
    known = readSettings(flat);
  } catch (err) {
    await earlier?.abandon().catch(() => undefined);
    client.disconnect();
    if (err instanceof StoreError) throw err;
    throw new StoreError(`cannot use Redis at ${shown(options.url)} (${(err as Error).message})`);
  }
  /** why this replica must not use the sandbox (a newer layout), said by every unit */
  const refused = () => (known.layout > REDIS_LAYOUT ? new StoreRefusal(newerLayout(known.layout)) : undefined);
  let lastSettings = known.json;
  const globalIds = () => createIds(known.seed, {});
  let ids = globalIds();

  function readSettings(flat: string[]) {
    const m = new Map<string, string>();
    for (let i = 0; i < flat.length; i += 2) m.set(flat[i]!, flat[i + 1]!);
    return { v: Number(m.get("v") ?? 0), seed: m.get("seed") ?? "", gen: m.get("gen") ?? "", json: m.get("json") ?? "", layout: Number(m.get("layout") ?? 2) };
  }
  const settingsNow = (): Settings | undefined => parts && { clock_offset_ms: parts.clock.offsetMs(), scenario: parts.scenarios.choice() };
  /** Settings another replica wrote, in force here. */
  function adopt(next: typeof known): void {
    const generationChanged = next.gen !== known.gen;
    if (next.seed !== known.seed) ids = createIds(next.seed, {});
    known = next;
    if (generationChanged) dropAll();
    if (!parts || !next.json) return;
    const s = JSON.parse(next.json) as Settings;
    parts.clock.setOffset?.(s.clock_offset_ms);
    parts.scenarios.adopt(s.scenario);
    lastSettings = JSON.stringify(settingsNow());
  }
  /** What failed, as the 503 its unit answers (a refusal keeps its reason). */
  const unavailable = (err: unknown) => (err instanceof StoreUnavailable ? err : new StoreUnavailable((err as Error).message));
  /** The settings' version, and the settings when it moved. */
  async function checkSettings(): Promise<void> {
    const [v, layout] = await again(() => client.hmget(global.settings, "v", "layout"));
    if (Number(v ?? 0) !== known.v || Number(layout ?? 2) !== known.layout)
      adopt(readSettings(await again(() => client.hgetall(global.settings)).then((h) => Object.entries(h).flat())));
    const refusal = refused();
    if (refusal) throw refusal;
  }

  // ---- merchants held in memory
  const partitions = new Map<string, Partition>();
  const fixtureMerchants = fixtures.merchants.map((m) => m.merchant_id);
  /** One merchant's part of a state: its records, the state's counters. */
  const sliceOf = (state: State, merchantId: string): State => {
    const part = { ...state };
    const mine = (list: { merchant_id: string }[]) => list.filter((r) => r.merchant_id === merchantId);
    for (const c of COLLECTIONS) (part as unknown as Record<string, unknown>)[c] = mine(state[c] as { merchant_id: string }[]);
    return part;
  };
  const initial = (merchantId: string): State => sliceOf(stateFromFixtures(fixtures, known.seed), merchantId);
  const loadSlots = createSlots(LOADS_AT_ONCE);
  /** fixture merchants whose fixtures hold work that falls due, and when */
  const fixtureDue = fixtureMerchants.flatMap((m): [string, number][] => {
    const at = createRepository(initial(m)).nextDueAt();
    return at === undefined ? [] : [[m, at]];
  });
  const ctx: PartitionContext = {
    link,
    scripts,
    keysOf: (merchantId) => partitionKeys(options.prefix, merchantId, options.cluster === true),
    token,
    seed: () => known.seed,
    generation: () => known.gen,
    async generationMoved() {
      const before = known.gen;
      await checkSettings();
      return known.gen !== before;
    },
    initial,
    scenarios: () => parts?.scenarios,
    namesCard: options.namesCard ?? (() => false),
    async loading<T>(work: () => Promise<T>): Promise<T> {
      await loadSlots.acquire();
      try {
        return await work();
      } finally {
        loadSlots.release();
      }
    },
    loaded: () => {
      // a merchant came in whole: the least recently served may have to go now, not at the next tick
      if (!trimSoon) trimSoon = setImmediate(() => ((trimSoon = undefined), trim()));
    },
    routeCounts() {
      for (const [k, n] of parts?.scenarios.takeCounts() ?? []) {
        const merchantId = k.slice(0, k.indexOf("|"));
        partitions.get(merchantId)?.nth.push([k, n]);
      }
    },
    async indexed(merchantId, where, dueAt, installed) {
      const sent: Promise<unknown>[] = [];
      if (installed) sent.push(again(() => client.sadd(global.merchants, merchantId)));
      if (where.length) sent.push(again(() => client.hset(global.where, Object.fromEntries(where))));
      if (dueAt === null) sent.push(again(() => client.zrem(global.due, merchantId)));
      else if (dueAt !== undefined) sent.push(again(() => client.zadd(global.due, dueAt, merchantId)));
      await Promise.all(sent);
    },
  };
  /** The merchant's partition, made most recently used. */
  function partition(merchantId: string): Partition {
    let p = partitions.get(merchantId);
    if (p) partitions.delete(merchantId);
    else p = new Partition(merchantId, ctx);
    partitions.set(merchantId, p);
    p.usedAt = Date.now();
    return p;
  }
  const commits = new WeakMap<Partition, () => Promise<void>>();
  const commitOf = (p: Partition) => {
    let commit = commits.get(p);
    if (!commit)
      commits.set(
        p,
        (commit = groupCommit(async () => {
          try {
            await p.write(false);
          } catch (err) {
            spoil(p);
            throw err instanceof StoreUnavailable ? err : new StoreUnavailable((err as Error).message);
          }
        })),
      );
    return commit;
  };
  /** What this copy holds may differ from Redis now: it is loaded whole next turn, and no unit joins this one. */
  function spoil(p: Partition): void {
    p.epoch = "";
    p.turns.spoil();
  }
  /** Drops the merchants served least recently while more records than allowed are held (not while a unit reads every merchant). */
  function trim(): void {
    if (globalTurns.busy) return;
    let held = 0;
    for (const p of partitions.values()) held += p.size;
    for (const p of partitions.values()) {
      if (held <= heldRecords) break;
      if (p.turns.busy) continue;
      held -= p.size;
      forget(p);
    }
  }
  function forget(p: Partition): void {
    partitions.delete(p.merchantId);
    parts?.scenarios.resetCounters(p.merchantId);
  }
  /** A new generation (a reset of everything): every merchant held is dropped, to be installed again. */
  function dropAll(): void {
    for (const p of [...partitions.values()]) if (!p.turns.busy) forget(p);
    for (const p of partitions.values()) p.epoch = "";
  }
  let trimSoon: NodeJS.Immediate | undefined;
  const trimmer = setInterval(trim, 1_000);
  trimmer.unref();

  const rollCall = await answerRollCall(link, global.replicas, `${hostname()}:${process.pid}:${tag}`, { layout: REDIS_LAYOUT, version: packageVersion() });

  // ---- every merchant, read-only (the settings' turn)
  const held = () => [...partitions.values()].map((p) => p.records);
  const everything = mergedRecords(
    held,
    (m) => partitions.get(m)?.records,
    () =>
      mergedState(
        known.seed,
        [...partitions.values()].map((p) => p.state),
      ),
  );
  const requests = sharedRequests(link, global.requests, tag);

  /** Every merchant of this generation brought up to date here, without their turns. */
  async function catchUpAll(): Promise<void> {
    const merchants = new Set([...fixtureMerchants, ...(await again(() => client.smembers(global.merchants)))]);
    await Promise.all(
      [...merchants].map(async (m) => {
        const p = partition(m);
        if (p.turns.busy) return; // its unit is here: it is up to date
        const sent = { epoch: p.epoch, version: p.version };
        const reply = (await scripts.acquire(acquireKeys(p.keys), ["", LEASE_MS, known.gen, p.epoch, p.version])) as (string | number)[];
        // a unit took it meanwhile (and so brought it up to date), or another catch-up did
        if (p.turns.busy || p.epoch !== sent.epoch || p.version !== sent.version) return;
        if (Number(reply[0]) === 3) {
          if (p.epoch !== "") partitions.set(m, new Partition(m, ctx)); // not installed yet: its fixtures
          return;
        }
        await p.take(reply);
      }),
    );
  }

  /** the settings' lease, renewed while this replica holds their turn: a list of every merchant may take longer than the lease */
  const globalLease = leaseKeeper(scripts.renew, global.lock, token);
  const releaseGlobal = () => {
    globalLease.stop();
    return scripts.release([global.lock], [token]).then(
      () => undefined,
      () => undefined,
    );
  };
  /** Writes the settings if they changed here (the caller holds their turn); `generation` starts a new one. */
  async function writeSettings(generation = ""): Promise<void> {
    const settings = settingsNow();
    const json = settings ? JSON.stringify(settings) : known.json;
    if (json === lastSettings && generation === "") return;
    const v = Number(await settingsWrite([global.lock, global.settings, global.merchants, global.where, global.due], [token, LEASE_MS, json, generation]));
    if (v < 0) throw new StoreUnavailable("this replica's turn of the settings ran out before they were written");
    known = { ...known, v, json, gen: generation || known.gen };
    lastSettings = json;
  }
  const globalTurns = createTurns(
    async () => {
      try {
        for (let waited = 0; !Number(await take([global.lock], [token, LEASE_MS])); waited++) await sleep(waited < 20 ? 1 : 5);
        globalLease.keep();
        await Promise.all([checkSettings(), parts && requests.take(parts.requests)]);
      } catch (err) {
        await releaseGlobal();
        throw err instanceof StoreUnavailable ? err : new StoreUnavailable((err as Error).message);
      }
    },
    async () => {
      await writeSettings().catch(() => undefined);
      await releaseGlobal();
    },
  );

  // Redis keeps locks in its append-only file across a restart: a lock this replica no longer holds
  // (its turn ended with Redis away, and the release never arrived) would make every replica wait
  // out the lease. Reconnected, it gives back those of the turns not in use here (a turn being
  // taken or used goes on: its commands are sent again on the new connection).
  client.on("ready", () => {
    for (const p of partitions.values()) if (!p.turns.busy) void p.releaseTurn();
    if (!globalTurns.busy) void releaseGlobal();
  });

  const none = createRepository(
    stateFromFixtures({ ...fixtures, merchants: [], tokens: [], transactions: [], subscriptions: [], refunds: [], payouts: [] }, known.seed),
  );

  /** A unit of one merchant, in its turn; `again`: run again (twice at most) when its turn was lost before it wrote anything. */
  async function merchantUnit<T>(merchantId: string, work: (store: Store) => T | Promise<T>, again = false): Promise<T> {
    for (let run = 1; ; run++) {
      const p = partition(merchantId);
      const [entered, settings] = await Promise.allSettled([p.turns.enter(), checkSettings()]);
      if (entered.status === "rejected") throw entered.reason;
      try {
        if (settings.status === "rejected") throw unavailable(settings.reason);
        return await work(view({ partition: p }));
      } catch (err) {
        if (!(again && err instanceof TurnLost && run < 3)) throw err;
      } finally {
        p.turns.leave();
      }
    }
  }

  /** A unit opened where `here` is (undefined: in no unit): inside one of the same records it is part of it. */
  async function unitIn<T>(here: Context | undefined, work: (store: Store) => T | Promise<T>, scope?: UnitScope): Promise<T> {
    const merchantId = scope && "merchant" in scope ? scope.merchant : undefined;
    if (here && "partition" in here) {
      if (merchantId === undefined || merchantId === here.partition.merchantId) return work(view(here));
      throw new StoreError(`a unit of ${here.partition.merchantId} cannot open one of ${merchantId}`);
    }
    if (merchantId !== undefined) return merchantUnit(merchantId, work, Boolean(scope && "merchant" in scope && scope.again));
    if (here) return work(view(here));
    if (scope) {
      await checkSettings().catch((err: unknown) => Promise.reject(unavailable(err)));
      return work(view({ none: true }));
    }
    return globalUnit(here, work, true);
  }

  /** A unit with the settings' turn; `everyMerchant`: every merchant's records brought up to date here first, to read. */
  async function globalUnit<T>(here: Context | undefined, work: (store: Store) => T | Promise<T>, everyMerchant: boolean): Promise<T> {
    if (here && "all" in here) return work(view(here)); // part of the unit it is in
    if (here) throw new StoreError("a unit of one merchant cannot open one of every merchant");
    await globalTurns.enter();
    try {
      if (everyMerchant) await catchUpAll().catch((err: unknown) => Promise.reject(new StoreUnavailable((err as Error).message)));
      return await work(view({ all: true }));
    } finally {
      globalTurns.leave();
    }
  }

  /**
   * The store as seen from `here`: a unit's own records (a merchant's partition, none, or every
   * merchant's to read), its ids, its commit and the units opened inside it; undefined: outside every
   * unit (what the process reads at start and close, and where units are opened from). Each unit is
   * handed its view: nothing is looked up from the context the code happens to run in.
   */
  function view(here: Context | undefined): Store {
    return {
      kind: "redis",
      get data() {
        if (here && "partition" in here) return here.partition.state;
        if (here && "none" in here) return none.state;
        if (here) return (here.merged ??= everything.state);
        return everything.state;
      },
      get records(): Repository {
        if (here && "partition" in here) return here.partition.records;
        if (here && "none" in here) return none;
        return everything;
      },
      get ids() {
        return here && "partition" in here ? here.partition.ids : ids;
      },
      unit: (work, scope) => unitIn(here, work, scope),
      locate,
      dueScopes: (now) => dueScopesIn(here, now),
      share,
      commit: (last) => commitIn(here, last),
      reset: (merchantId) => resetIn(here, merchantId),
      restore: (to, merchantId) => restoreIn(here, to, merchantId),
      snapshots,
      close,
    };
  }

  /** QA snapshots: one hash, name → state file, shared by every replica; beside it each one's first and last line, for lists */
  const snapshots: Shelf = {
    async put(name, text) {
      const { first, last } = endsOf(name, text);
      await again(() =>
        client
          .multi()
          .hset(global.snapshots, name, text)
          .hset(global.snapshotEnds, name, JSON.stringify([first, last]))
          .exec(),
      );
    },
    get: async (name) => (await again(() => client.hget(global.snapshots, name))) ?? undefined,
    async ends() {
      const [names, kept] = await again(() => Promise.all([client.hkeys(global.snapshots), client.hgetall(global.snapshotEnds)]));
      const ends = await Promise.all(
        names.map(async (name) => {
          if (kept[name]) {
            const [first, last] = JSON.parse(kept[name]) as [string, string];
            return { name, first, last };
          }
          // saved before their ends were kept beside them: read whole, once
          const text = await again(() => client.hget(global.snapshots, name));
          return text === null ? undefined : endsOf(name, text);
        }),
      );
      return ends.filter((e) => e !== undefined).sort((a, b) => (a.name < b.name ? -1 : 1));
    },
    async remove(name) {
      const [[, removed]] = (await again(() => client.multi().hdel(global.snapshots, name).hdel(global.snapshotEnds, name).exec())) as [[Error | null, number]];
      return removed > 0;
    },
  };

  async function locate(kind: Locatable, id: string): Promise<string | undefined> {
    return (await again(() => client.hget(global.where, `${kind}:${id}`))) ?? undefined;
  }

  async function dueScopesIn(here: Context | undefined, now: Date): Promise<(UnitScope | undefined)[]> {
    if (here && "partition" in here) return [undefined]; // its own merchant's
    if (here && "none" in here) return [];
    const at = now.getTime();
    // the index, the merchants held here, and fixture merchants not installed yet whose fixtures have work due
    const waiting = fixtureDue.filter(([, due]) => due <= at).map(([m]) => m);
    const [due, installed] = await again(() =>
      Promise.all([
        client.zrangebyscore(global.due, "-inf", at),
        waiting.length ? client.smismember(global.merchants, ...waiting) : Promise.resolve([] as number[]),
      ]),
    );
    const merchants = new Set(due);
    waiting.forEach((m, i) => installed[i] || merchants.add(m));
    for (const p of partitions.values()) if ((p.records.nextDueAt() ?? Infinity) <= at) merchants.add(p.merchantId);
    return [...merchants].map((merchant) => ({ merchant }));
  }

  function share(shared: SharedParts): void {
    parts = shared;
    parts.requests.share(tag, requests.publish);
    parts.scenarios.takeCounts(); // counts are tracked from now on
    if (known.json) adopt(known);
    else lastSettings = "";
  }

  function commitIn(here: Context | undefined, last?: boolean): Promise<void> {
    if (here && "partition" in here) {
      const p = here.partition;
      // the unit's last write, and no other unit on this turn: it gives the turn back too
      if (last && p.turns.handOver())
        return p.write(true).catch((err: unknown) => {
          spoil(p);
          void p.releaseTurn();
          throw err instanceof StoreUnavailable ? err : new StoreUnavailable((err as Error).message);
        });
      return commitOf(p)();
    }
    if (here && "all" in here) return writeSettings();
    if (here) return Promise.resolve();
    return globalUnit(here, () => undefined, false); // the settings, if they changed here
  }

  async function resetIn(here: Context | undefined, merchantId?: string): Promise<void> {
    if (merchantId !== undefined) {
      await unitIn(here, () => partition(merchantId).install(initial(merchantId)), { merchant: merchantId });
      return;
    }
    await globalUnit(
      here,
      async () => {
        const merchants = await again(() => client.smembers(global.merchants));
        await writeSettings(randomBytes(6).toString("hex"));
        dropAll();
        // what the old generation left: dropped now, unless a replica installed it again meanwhile
        await Promise.all(merchants.map((m) => dropOld(installKeys(ctx.keysOf(m)), [known.gen])));
      },
      false,
    );
  }

  /**
   * An imported state: one merchant installed again with the file's records in its own turn, or,
   * for a whole file, a new generation (every merchant dropped, as a reset of everything) and then
   * each merchant of the file installed with its records. Every replica follows the generation.
   */
  async function restoreIn(here: Context | undefined, to: State, merchantId?: string): Promise<void> {
    if (merchantId !== undefined) {
      await unitIn(here, () => partition(merchantId).install(sliceOf(to, merchantId)), { merchant: merchantId });
      return;
    }
    await resetIn(here);
    const merchants = new Set(COLLECTIONS.flatMap((c) => (to[c] as { merchant_id: string }[]).map((r) => r.merchant_id)));
    for (const m of merchants) await unitIn(here, () => partition(m).install(sliceOf(to, m)), { merchant: m });
  }

  async function close(): Promise<void> {
    // a graceful stop hands the turns over at once: the units still here end (2 s at most), then
    // this replica's locks are given back, so no other replica waits out a lease
    clearInterval(trimmer);
    clearImmediate(trimSoon);
    await rollCall.stop();
    const busy = () => globalTurns.busy || [...partitions.values()].some((p) => p.turns.busy);
    for (const started = Date.now(); busy() && Date.now() - started < CLOSE_WAIT_MS;) await sleep(5);
    await Promise.all([...[...partitions.values()].map((p) => p.releaseTurn()), releaseGlobal()]);
    await client.quit().catch(() => client.disconnect());
  }

  // the store outside every unit: units are opened from it, each handed its own view
  const store = view(undefined);
  if (earlier) {
    // the earlier layout's sandbox, installed as an imported state is; its turn kept every replica of it out meanwhile
    try {
      await store.restore(earlier.state);
      await earlier.finish();
    } catch (err) {
      await earlier.abandon().catch(() => undefined);
      await close();
      throw new StoreError(
        `cannot move the sandbox at ${shown(options.url)} to layout ${REDIS_LAYOUT} (${(err as Error).message}); nothing was removed: start again`,
      );
    }
    options.report?.("info", `moved the sandbox at ${shown(options.url)} from layout 1 to layout ${REDIS_LAYOUT}: ${earlier.records} records`);
  }
  const refusal = refused();
  if (refusal) options.report?.("warn", `${refusal.message}; every request answers 503 until then`);
  return store;
}
