// The shared store (--redis-url): one sandbox for any number of replicas, partitioned by merchant.
// Redis holds the state (redis-scripts.ts lists the keys); a replica keeps the merchants it served
// recently in memory (held-merchants.ts, each a redis-partition.ts), with the embedded store's indexes, so
// handlers stay synchronous and unchanged. Each unit is handed its own view (view(): the merchant's
// partition, none, or every merchant's to read) with its commit and the units opened inside it;
// nothing is looked up from the async context the code runs in.
//
// A unit of work names the merchant it serves and takes that merchant's turn: units of different
// merchants run at the same time, on this replica or any other, and a replica that dies holding a
// turn delays only that merchant, for its lease. What is sandbox-wide (the scenario choice, the
// clock, the seed, the generation a reset of everything starts) is a versioned record (settings-record.ts):
// every unit checks its version as it takes its turn (in the same round trip), and it changes only
// in a unit that names no merchant, under its own turn. Such a unit reads every merchant's records
// (the dashboard's lists) and changes none. The connection to Redis, and what a command does when
// it fails half-way (sent again, or a commit resolved by its fence), is redis-link.ts's.
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { packageVersion } from "../../base/paths.js";
import { connect, shown } from "./redis-link.js";
import { sharedRequests } from "./shared-requests.js";
import { snapshotShelf } from "./snapshot-shelf.js";
import { readSettings, SettingsRecord, type Known } from "./settings-record.js";
import { openCrosstalk } from "./crosstalk.js";
import { answerRollCall } from "./roll-call.js";
import { loadFixtures } from "../fixtures/fixtures.js";
import { stateFromFixtures } from "../fixtures/initial-state.js";
import { mergedRecords, mergedState } from "./merged-records.js";
import { createRepository, type Repository } from "../../domain/records.js";
import { HELD_RECORDS, HeldMerchants } from "./held-merchants.js";
import type { Partition } from "./redis-partition.js";
import {
  checkPrefix,
  COLLECTIONS,
  defineScript,
  defineScripts,
  DROP_OLD,
  globalKeys,
  installKeys,
  partitionKeys,
  SETTINGS_INIT,
  SETTINGS_WRITE,
  TAKE,
} from "./redis-scripts.js";
import { layoutAt, REDIS_LAYOUT, takeLayoutOne, type EarlierSandbox } from "./redis-layout.js";
import { StoreError, asUnavailable, StoreUnavailable, TurnLost, type SharedParts, type Store, type UnitScope, type Locatable } from "../store.js";
import type { State } from "../../domain/types.js";

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

/** How long a closing replica waits for its units before it gives the turns back anyway. */
const CLOSE_WAIT_MS = 2_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Where a unit runs: one merchant's partition, everything (read-only, with the settings' turn), or nothing. */
type Context = { partition: Partition } | { all: true; merged?: State } | { none: true };

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
  let parts: SharedParts | undefined;

  // the sandbox's settings as Redis has them (created on first use); a sandbox in an earlier layout is moved first
  let known: Known;
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
  const settings = new SettingsRecord(link, global, token, { ...scripts, take, write: settingsWrite }, known, {
    parts: () => parts,
    generationChanged: () => held.dropAll(),
    onTurn: async () => parts && requests.take(parts.requests),
  });

  // ---- merchants held in memory
  const fixtureMerchants = fixtures.merchants.map((m) => m.merchant_id);
  /** One merchant's part of a state: its records, the state's counters. */
  const sliceOf = (state: State, merchantId: string): State => {
    const part = { ...state };
    const mine = (list: { merchant_id: string }[]) => list.filter((r) => r.merchant_id === merchantId);
    for (const c of COLLECTIONS) (part as unknown as Record<string, unknown>)[c] = mine(state[c] as { merchant_id: string }[]);
    return part;
  };
  const initial = (merchantId: string): State => sliceOf(stateFromFixtures(fixtures, settings.known.seed), merchantId);
  /** fixture merchants whose fixtures hold work that falls due, and when */
  const fixtureDue = fixtureMerchants.flatMap((m): [string, number][] => {
    const at = createRepository(initial(m)).nextDueAt();
    return at === undefined ? [] : [[m, at]];
  });
  const keysOf = (merchantId: string) => partitionKeys(options.prefix, merchantId, options.cluster === true);
  const held = new HeldMerchants(
    {
      link,
      scripts,
      keysOf,
      token,
      seed: () => settings.known.seed,
      generation: () => settings.known.gen,
      async generationMoved() {
        const before = settings.known.gen;
        await settings.check();
        return settings.known.gen !== before;
      },
      initial,
      scenarios: () => parts?.scenarios,
      namesCard: options.namesCard ?? (() => false),
      async indexed(merchantId, where, dueAt, installed) {
        const sent: Promise<unknown>[] = [];
        if (installed) sent.push(again(() => client.sadd(global.merchants, merchantId)));
        if (where.length) sent.push(again(() => client.hset(global.where, Object.fromEntries(where))));
        if (dueAt === null) sent.push(again(() => client.zrem(global.due, merchantId)));
        else if (dueAt !== undefined) sent.push(again(() => client.zadd(global.due, dueAt, merchantId)));
        await Promise.all(sent);
      },
    },
    options.heldRecords ?? HELD_RECORDS,
    () => settings.turns.busy,
    () => parts?.scenarios,
  );
  const partition = (merchantId: string) => held.partition(merchantId);

  const rollCall = await answerRollCall(link, global.replicas, `${hostname()}:${process.pid}:${tag}`, { layout: REDIS_LAYOUT, version: packageVersion() });
  const crosstalk = await openCrosstalk(link, global.crosstalk, tag);

  // ---- every merchant, read-only (the settings' turn)
  const everything = mergedRecords(
    () => held.all().map((p) => p.records),
    (m) => held.get(m)?.records,
    () =>
      mergedState(
        settings.known.seed,
        held.all().map((p) => p.state),
      ),
  );
  const requests = sharedRequests(link, global.requests, tag);

  /** Every merchant of this generation brought up to date here, without their turns. */
  async function catchUpAll(): Promise<void> {
    const merchants = new Set([...fixtureMerchants, ...(await again(() => client.smembers(global.merchants)))]);
    await held.catchUp([...merchants], settings.known.gen);
  }

  // Redis keeps locks in its append-only file across a restart: a lock this replica no longer holds
  // (its turn ended with Redis away, and the release never arrived) would make every replica wait
  // out the lease. Reconnected, it gives back those of the turns not in use here (a turn being
  // taken or used goes on: its commands are sent again on the new connection).
  client.on("ready", () => {
    for (const p of held.all()) if (!p.turns.busy) void p.releaseTurn();
    if (!settings.turns.busy) void settings.release();
  });

  const none = createRepository(
    stateFromFixtures({ ...fixtures, merchants: [], tokens: [], transactions: [], subscriptions: [], refunds: [], payouts: [] }, settings.known.seed),
  );

  /** A unit of one merchant, in its turn; `again`: run again (twice at most) when its turn was lost before it wrote anything. */
  async function merchantUnit<T>(merchantId: string, work: (store: Store) => T | Promise<T>, again = false): Promise<T> {
    for (let run = 1; ; run++) {
      const p = partition(merchantId);
      const [entered, checked] = await Promise.allSettled([p.turns.enter(), settings.check()]);
      if (entered.status === "rejected") throw entered.reason;
      try {
        if (checked.status === "rejected") throw asUnavailable(checked.reason);
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
      await settings.check().catch((err: unknown) => Promise.reject(asUnavailable(err)));
      return work(view({ none: true }));
    }
    return globalUnit(here, work, true);
  }

  /** A unit with the settings' turn; `everyMerchant`: every merchant's records brought up to date here first, to read. */
  async function globalUnit<T>(here: Context | undefined, work: (store: Store) => T | Promise<T>, everyMerchant: boolean): Promise<T> {
    if (here && "all" in here) return work(view(here)); // part of the unit it is in
    if (here) throw new StoreError("a unit of one merchant cannot open one of every merchant");
    await settings.turns.enter();
    try {
      if (everyMerchant) await catchUpAll().catch((err: unknown) => Promise.reject(new StoreUnavailable((err as Error).message)));
      return await work(view({ all: true }));
    } finally {
      settings.turns.leave();
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
        return here && "partition" in here ? here.partition.ids : settings.ids;
      },
      unit: (work, scope) => unitIn(here, work, scope),
      locate,
      dueScopes: (now) => dueScopesIn(here, now),
      share,
      commit: (last) => commitIn(here, last),
      reset: (merchantId) => resetIn(here, merchantId),
      restore: (to, merchantId) => restoreIn(here, to, merchantId),
      snapshots,
      crosstalk,
      close,
    };
  }

  const snapshots = snapshotShelf(link, global);

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
    for (const p of held.all()) if ((p.records.nextDueAt() ?? Infinity) <= at) merchants.add(p.merchantId);
    return [...merchants].map((merchant) => ({ merchant }));
  }

  function share(shared: SharedParts): void {
    parts = shared;
    parts.requests.share(tag, requests.publish);
    parts.scenarios.takeCounts(); // counts are tracked from now on
    settings.shared();
  }

  function commitIn(here: Context | undefined, last?: boolean): Promise<void> {
    if (here && "partition" in here) {
      const p = here.partition;
      // the unit's last write, and no other unit on this turn: it gives the turn back too
      if (last && p.turns.handOver())
        return p.write(true).catch((err: unknown) => {
          held.spoil(p);
          void p.releaseTurn();
          throw asUnavailable(err);
        });
      return held.commitOf(p)();
    }
    if (here && "all" in here) return settings.write();
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
        await settings.write(randomBytes(6).toString("hex"));
        held.dropAll();
        // what the old generation left: dropped now, unless a replica installed it again meanwhile
        await Promise.all(merchants.map((m) => dropOld(installKeys(keysOf(m)), [settings.known.gen])));
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
    held.stop();
    await rollCall.stop();
    await crosstalk.stop();
    const busy = () => settings.turns.busy || held.all().some((p) => p.turns.busy);
    for (const started = Date.now(); busy() && Date.now() - started < CLOSE_WAIT_MS;) await sleep(5);
    await Promise.all([...held.all().map((p) => p.releaseTurn()), settings.release()]);
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
  const refusal = settings.refused();
  if (refusal) options.report?.("warn", `${refusal.message}; every request answers 503 until then`);
  return store;
}
