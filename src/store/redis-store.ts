// The shared store (--redis-url): one sandbox for any number of replicas. Redis holds the state
// (redis-scripts.ts lists the keys); each replica keeps a copy in memory with the same indexes as
// the embedded store, so handlers stay synchronous and unchanged.
//
// Units of work take a sandbox-wide turn: a lock with a lease, taken by a Lua script that also
// returns the commits this replica missed, which are applied to its copy before the unit runs.
// While a replica holds the turn, every unit it opens runs on it (a busy replica serves a batch of
// requests per turn, and hands the turn over after TURN_MS so the others get theirs); each unit
// ends with a commit script that writes what it changed, announces it on a stream and keeps or
// gives up the turn. One global order, not per-record locks: a request reads and writes several
// records and indexes (the payment, its refunds, the order_no index, id counters, nth-call
// counts), and a single turn makes all of that atomic across replicas without rollback.
import { AsyncLocalStorage } from "node:async_hooks";
import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { createIds, type Ids } from "../ids.js";
import { loadFixtures } from "./fixtures.js";
import { resetMerchant, stateFromFixtures } from "./initial-state.js";
import { KEY_FIELD, type Collection } from "./journal.js";
import { createRepository, type Repository } from "./records.js";
import { ACQUIRE, COMMIT, RELEASE } from "./redis-scripts.js";
import { createTurns } from "./turns.js";
import { groupCommit, StoreError, StoreUnavailable, type SharedParts, type Store } from "./store.js";
import type { State } from "./types.js";
import { REQUEST_LOG_CAPACITY, type Exchange, type RequestLogEntry } from "../request-log.js";
import { NTH_COUNTER_LIMIT, type ScenarioChoice } from "../scenarios/registry.js";

export interface RedisStoreOptions {
  url: string;
  prefix: string;
  fixturesDir: string;
  seed: string | undefined;
}

/** What replicas share besides records. */
interface Settings {
  clock_offset_ms: number;
  scenario: ScenarioChoice;
}

/** One commit as announced on the stream. */
interface Entry {
  r: [Collection, Record<string, unknown>][];
  x: [Collection, string][];
  counters?: Record<string, number>;
  settings?: Settings;
  nth: [string, number][];
}

/** How long a turn survives a replica that stopped answering (each commit renews it). */
const LEASE_MS = 5_000;
/** How long a closing replica waits for its units before it gives the turn back anyway. */
const CLOSE_WAIT_MS = 2_000;
const COLLECTIONS = Object.keys(KEY_FIELD) as Collection[];

/** The address without its password, for messages. */
const shown = (url: string) => url.replace(/\/\/([^@/]*)@/, "//***@");

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function openRedisStore(options: RedisStoreOptions): Promise<Store> {
  const fixtures = loadFixtures(options.fixturesDir);
  const prefix = options.prefix;
  const key = (name: string) => `${prefix}${name}`;
  const client = new Redis(options.url, {
    lazyConnect: true,
    // a request fails at once while Redis is away (503), rather than waiting in a queue
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 2_000,
    // back within 200 ms of Redis (a restart): requests answer again at once, not after a backoff
    retryStrategy: (times) => Math.min(times * 50, 200),
  });
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

  // EVALSHA, with the script sent again only if Redis lost it (a restart)
  const script = (name: string, lua: string, numberOfKeys: number) => {
    client.defineCommand(name, { lua, numberOfKeys });
    return (...args: (string | number)[]) => (client as unknown as Record<string, (...a: (string | number)[]) => Promise<unknown>>)[name]!(...args);
  };
  const acquireScript = script("sandgateAcquire", ACQUIRE, 5);
  const commitScript = script("sandgateCommit", COMMIT, 7);
  const releaseScript = script("sandgateRelease", RELEASE, 1);
  const token = randomBytes(12).toString("hex");
  const inside = new AsyncLocalStorage<true>();
  let state: State = stateFromFixtures(fixtures, options.seed ?? randomBytes(8).toString("hex"));
  let records: Repository = createRepository(state);
  let ids: Ids = createIds(state.seed, state.counters);
  let parts: SharedParts | undefined;
  /** what this copy last saw of Redis: "" = nothing yet, or must load again */
  let epoch = "";
  let version = 0;
  let lastCounters = "";
  let lastSettings = "";
  let loadedSettings: Settings | undefined;
  /** the id of the last request log entry this replica has from the shared log */
  let lastRequest = "";
  const tag = token.slice(0, 6);

  /** The other replicas' request log entries, into this one's log. */
  function takeRequests([last, ...logged]: string[]): void {
    if (!parts) return; // the first turn, before the log is handed over: it reads them all next time
    lastRequest = last ?? lastRequest;
    for (const text of logged) {
      const { entry, exchange } = JSON.parse(text) as { entry: RequestLogEntry; exchange?: Exchange };
      if (!entry.id.startsWith(`req-${tag}-`)) parts.requests.addShared(entry, exchange);
    }
  }

  /** This replica's request log entry, to the others (sent on the connection before the answer goes out). */
  function publishRequest(entry: RequestLogEntry, exchange: Exchange | undefined): void {
    client.xadd(key("requests"), "MAXLEN", "~", String(REQUEST_LOG_CAPACITY), "*", "d", JSON.stringify({ entry, exchange })).catch(() => undefined);
  }

  const settingsNow = (): Settings | undefined => parts && { clock_offset_ms: parts.clock.offsetMs(), scenario: parts.scenarios.choice() };
  const adopt = (s: Settings) => {
    if (!parts) return;
    parts.clock.setOffset?.(s.clock_offset_ms);
    parts.scenarios.adopt(s.scenario);
    lastSettings = JSON.stringify(settingsNow());
  };

  const unavailable = (err: unknown) => (err instanceof StoreUnavailable ? err : new StoreUnavailable((err as Error).message));

  /** A new copy of the whole state from Redis. */
  async function load(): Promise<void> {
    const [meta, nthOld, nthYoung, current] = await Promise.all([
      client.hgetall(key("meta")),
      client.hgetall(key("nth:old")),
      client.hgetall(key("nth:young")),
      client.get(key("version")),
    ]);
    const next = { version: 1, seed: meta.seed ?? state.seed, counters: JSON.parse(meta.counters ?? "{}") } as State;
    for (const c of COLLECTIONS) {
      const keys = await client.zrange(key(`o:${c}`), "0", "-1");
      const list: object[] = [];
      for (let i = 0; i < keys.length; i += 1000) {
        const values = await client.hmget(key(`c:${c}`), ...keys.slice(i, i + 1000));
        for (const v of values) if (v !== null) list.push(JSON.parse(v) as object);
      }
      (next as unknown as Record<string, object[]>)[c] = list;
    }
    state = next;
    records = createRepository(state);
    ids = createIds(state.seed, state.counters);
    version = Number(current ?? 0);
    lastCounters = JSON.stringify(state.counters);
    loadedSettings = meta.settings ? (JSON.parse(meta.settings) as Settings) : undefined;
    if (parts) {
      parts.scenarios.resetCounters();
      for (const [k, n] of [...Object.entries(nthOld), ...Object.entries(nthYoung)]) parts.scenarios.setCount(k, Number(n));
      parts.scenarios.takeCounts();
      if (loadedSettings) adopt(loadedSettings);
      else lastSettings = "";
    }
  }

  /** Writes `next` as the whole state under a new epoch (seeding, reset); the caller holds the turn. */
  async function replaceAll(next: State, keepNth: (k: string) => boolean): Promise<void> {
    await client.del(key("epoch"));
    const nth = { ...(await client.hgetall(key("nth:old"))), ...(await client.hgetall(key("nth:young"))) };
    const batch = client.multi();
    batch.del(key("meta"), key("nth:old"), key("nth:young"), ...COLLECTIONS.flatMap((c) => [key(`c:${c}`), key(`o:${c}`)]));
    let seq = 0;
    for (const c of COLLECTIONS) {
      for (const record of next[c] as unknown as Record<string, unknown>[]) {
        const k = String(record[KEY_FIELD[c]]);
        batch.hset(key(`c:${c}`), k, JSON.stringify(record));
        batch.zadd(key(`o:${c}`), String(++seq), k);
      }
    }
    const kept = Object.entries(nth).filter(([k]) => keepNth(k));
    if (kept.length) batch.hset(key("nth:young"), Object.fromEntries(kept));
    batch.set(key("seq"), seq);
    const settings = settingsNow();
    batch.hset(key("meta"), { seed: next.seed, counters: JSON.stringify(next.counters), ...(settings ? { settings: JSON.stringify(settings) } : {}) });
    const fresh = randomBytes(8).toString("hex");
    batch.set(key("epoch"), fresh);
    batch.incr(key("version"));
    const results = await batch.exec();
    const failed = results?.find(([err]) => err);
    if (!results || failed) throw new StoreUnavailable(failed?.[0]?.message ?? "state not written");
    state = next;
    records = createRepository(state);
    ids = createIds(state.seed, state.counters);
    epoch = fresh;
    version = Number(results.at(-1)![1]);
    lastCounters = JSON.stringify(state.counters);
    lastSettings = settings ? JSON.stringify(settings) : "";
  }

  /** Applies the commits another replica made since this copy's version. */
  function applyEntries(texts: string[]): void {
    for (const text of texts) {
      const entry = JSON.parse(text) as Entry;
      for (const [c, record] of entry.r) records.apply(c, record);
      for (const [c, k] of entry.x) records.forget(c, k);
      if (entry.counters) {
        Object.assign(state.counters, entry.counters);
        lastCounters = JSON.stringify(state.counters);
      }
      if (entry.settings) adopt(entry.settings);
      for (const [k, n] of entry.nth) parts?.scenarios.setCount(k, n);
    }
  }

  /** Takes the turn (waiting while another replica has it) and brings this copy up to date. */
  async function acquire(): Promise<void> {
    for (let waited = 0; ; waited++) {
      const reply = (await acquireScript(key("lock"), key("epoch"), key("version"), key("changes"), key("requests"), token, LEASE_MS, epoch, version, lastRequest)) as (
        | string
        | number
        | string[]
      )[];
      const status = Number(reply[0]);
      if (status === 0) {
        await sleep(waited < 20 ? 1 : 5);
        continue;
      }
      try {
        if (status !== 3) takeRequests(reply[3] as string[]);
        if (status === 3) await replaceAll(stateFromFixtures(fixtures, options.seed ?? state.seed), () => false);
        else if (status === 2) {
          await load();
          epoch = String(reply[1]);
        } else {
          applyEntries(reply.slice(4) as string[]);
          version = Number(reply[2]);
        }
      } catch (err) {
        epoch = "";
        await releaseScript(key("lock"), token).catch(() => undefined);
        throw err;
      }
      return;
    }
  }

  /** Writes what this copy changed; with `release`, gives the turn up too. */
  async function write(release: boolean): Promise<void> {
    const changes = records.takeChanges();
    const removed = records.takeRemoved();
    const counters = JSON.stringify(state.counters);
    const settings = settingsNow();
    const settingsText = settings ? JSON.stringify(settings) : "";
    const nth = parts?.scenarios.takeCounts() ?? [];
    const countersChanged = counters !== lastCounters;
    const settingsChanged = settingsText !== "" && settingsText !== lastSettings;
    if (!changes.length && !removed.length && !countersChanged && !settingsChanged && !nth.length) {
      if (release) await releaseScript(key("lock"), token);
      return;
    }
    const args: (string | number)[] = [];
    const texts: string[] = [];
    args.push(changes.length);
    for (const { c, v } of changes) {
      const json = JSON.stringify(v);
      texts.push(`["${c}",${json}]`);
      args.push(c, String((v as Record<string, unknown>)[KEY_FIELD[c]]), json);
    }
    args.push(removed.length);
    for (const { c, k } of removed) args.push(c, k);
    args.push(nth.length);
    for (const [k, n] of nth) args.push(k, n);
    const entry = `{"r":[${texts.join(",")}],"x":${JSON.stringify(removed.map(({ c, k }) => [c, k]))},"nth":${JSON.stringify(nth)}${
      countersChanged ? `,"counters":${counters}` : ""
    }${settingsChanged ? `,"settings":${settingsText}` : ""}}`;
    const keys = [key("lock"), key("version"), key("changes"), key("meta"), key("nth:young"), key("nth:old"), key("seq")];
    const next = Number(
      await commitScript(...keys, token, LEASE_MS, release ? 1 : 0, prefix, NTH_COUNTER_LIMIT / 2, entry, countersChanged ? counters : "", settingsChanged ? settingsText : "", ...args),
    );
    if (next < 0) throw new StoreUnavailable("this replica's turn ran out before its changes were written");
    version = next;
    lastCounters = counters;
    if (settingsChanged) lastSettings = settingsText;
  }

  const turns = createTurns(
    () => acquire().catch((err: unknown) => Promise.reject(unavailable(err))),
    () =>
      write(true).catch(() => {
        epoch = ""; // what this copy holds may differ from Redis now: load it all next turn
        return releaseScript(key("lock"), token).then(
          () => undefined,
          () => undefined,
        );
      }),
  );

  // Redis keeps the lock in its append-only file across a restart: a lock this replica no longer
  // holds (its turn ended with Redis away, and the release never arrived) would make every replica
  // wait out the lease. Reconnected, it gives it back. A turn being taken at that moment loses it:
  // its commit is refused (503), nothing is written twice.
  client.on("ready", () => {
    if (!turns.holding) releaseScript(key("lock"), token).catch(() => undefined);
  });

  const commitInTurn = groupCommit(async () => {
    try {
      await write(false);
    } catch (err) {
      epoch = "";
      throw unavailable(err);
    }
  });

  // As in one process, a unit's changes are saved by its commit() calls (made before answering);
  // what it changed without one (nth-call counts of a query, say) is written when the turn ends,
  // before any other replica can take it.
  async function unit<T>(work: () => T | Promise<T>): Promise<T> {
    if (inside.getStore()) return work();
    await turns.enter();
    try {
      return await inside.run(true, work);
    } finally {
      turns.leave();
    }
  }

  // the first turn seeds an empty Redis or loads what is there
  try {
    await unit(() => undefined);
  } catch (err) {
    client.disconnect();
    throw new StoreError(`cannot use Redis at ${shown(options.url)} (${(err as Error).message})`);
  }

  return {
    kind: "redis",
    get data() {
      return state;
    },
    get records() {
      return records;
    },
    get ids() {
      return ids;
    },
    unit,
    share(shared) {
      parts = shared;
      parts.requests.share(tag, publishRequest);
      parts.scenarios.takeCounts(); // counts are tracked from now on
      if (loadedSettings) adopt(loadedSettings);
    },
    commit: () => (turns.holding && inside.getStore() ? commitInTurn() : unit(commitInTurn)),
    async reset(merchantId) {
      await unit(async () => {
        const initial = stateFromFixtures(fixtures, state.seed);
        if (merchantId === undefined) return replaceAll(initial, () => false);
        const next = { ...state, counters: { ...state.counters } };
        resetMerchant(next, initial, merchantId);
        return replaceAll(next, (k) => !k.startsWith(`${merchantId}|`));
      });
    },
    async close() {
      // a graceful stop hands the turn over at once: the units still here end (2 s at most), then
      // this replica's lock is given back, so no other replica waits out its lease
      for (const started = Date.now(); turns.busy && Date.now() - started < CLOSE_WAIT_MS; ) await sleep(5);
      await releaseScript(key("lock"), token).catch(() => undefined);
      await client.quit().catch(() => client.disconnect());
    },
  };
}
