// The layouts of the shared store's keys in Redis, and the move from an earlier one (docs/replicas.md,
// "Upgrading replicas"). The settings hash names the layout its sandbox is in (`layout`):
//   1  every key directly under the prefix (lock, epoch, meta, c:<collection>, ...): one sandbox-wide
//      turn. Written by Sandgates before the store was partitioned by merchant; no `layout` anywhere.
//   2  partitioned by merchant (m:{M}:…, global:{g}:…; redis-scripts.ts lists the keys), no `layout`.
//   3  the same keys as 2, and the settings say `layout: 3`. Written from this release on.
// A replica that finds layout 2 writes the field (nothing else differs). One that finds layout 1
// moves it once: unless a replica of layout 1 is still running, it takes that layout's turn (so none
// can start a unit), reads the sandbox, installs it in today's keys as an imported state file is,
// and leaves markers that make a layout-1 replica fail instead of starting an empty sandbox of its
// own. A replica that finds a newer layout than its own answers 503 with the reason, writing nothing.
import { randomBytes } from "node:crypto";
import type { Cluster, Redis } from "ioredis";
import { COLLECTIONS } from "./redis-scripts.js";
import { upgradeRecords } from "../state-formats.js";
import { StoreError } from "../store.js";
import { STATE_VERSION, type State } from "../../domain/types.js";

/** The layout this code writes. */
export const REDIS_LAYOUT = 3;

/** The keys of layout 1 that held the sandbox (its request log and nth-call counts are not moved). */
const layoutOneKeys = (prefix: string) => {
  const k = (name: string) => `${prefix}${name}`;
  return {
    lock: k("lock"),
    epoch: k("epoch"),
    meta: k("meta"),
    gone: ["version", "changes", "seq", "nth:young", "nth:old", "requests", ...COLLECTIONS.flatMap((c) => [`c:${c}`, `o:${c}`])].map(k),
    records: (c: string) => k(`c:${c}`),
    order: (c: string) => k(`o:${c}`),
  };
};

/** The epoch a moved layout-1 sandbox is left with: a layout-1 replica then loads `meta`, which is no longer a hash, and fails. */
const MOVED = `moved to layout ${REDIS_LAYOUT}`;
/**
 * A layout-1 replica reads the sandbox's epoch on every turn, at least once a second (its timer): an
 * epoch no one read for this long has no replica running. Redis counts idle time in whole seconds,
 * and from its own start (a restarted Redis has every key fresh), so a start watches for up to
 * WATCH_MS before it calls a replica running.
 */
const IDLE_S = 3;
const WATCH_MS = 4_500;
/** How long the move may take before its turn lapses (a sandbox of 100,000 payments moves in a few seconds). */
const MOVE_LEASE_MS = 60_000;

/** The layout Redis holds at this prefix: 0 when it holds no sandbox yet. */
export async function layoutAt(client: Redis | Cluster, prefix: string, settingsKey: string): Promise<number> {
  const [exists, layout] = await Promise.all([client.exists(settingsKey), client.hget(settingsKey, "layout")]);
  if (exists) return layout === null ? 2 : Number(layout);
  const one = layoutOneKeys(prefix);
  return (await client.exists(one.epoch)) && (await client.get(one.epoch)) !== MOVED ? 1 : 0;
}

/** What a replica of a newer Sandgate left: said by every answer of this one, which writes nothing. */
export const newerLayout = (layout: number) =>
  `Redis holds this sandbox in layout ${layout}, written by a newer Sandgate; this replica writes layout ${REDIS_LAYOUT}: upgrade it to the newer Sandgate`;

/** A layout-1 sandbox read whole, with the turn that keeps its replicas out until it is moved. */
export interface EarlierSandbox {
  state: State;
  /** the scenario choice and clock offset its replicas shared (JSON), or "" */
  settings: string;
  records: number;
  /** writes the markers and gives the turn back: call once it is installed in today's layout */
  finish(): Promise<void>;
  /** gives the turn back, leaving it as it was (the move failed) */
  abandon(): Promise<void>;
}

/**
 * Is a replica of layout 1 running? One holds its turn, or read its epoch within IDLE_S, watched for
 * up to WATCH_MS (OBJECT IDLETIME reads the key without touching it).
 */
async function layoutOneRunning(client: Redis | Cluster, prefix: string): Promise<boolean> {
  const one = layoutOneKeys(prefix);
  for (const started = Date.now(); ; await new Promise((resolve) => setTimeout(resolve, 100))) {
    const [idle, holder] = await Promise.all([client.object("IDLETIME", one.epoch) as Promise<number | null>, client.get(one.lock)]);
    if (holder === null && (idle === null || idle >= IDLE_S)) return false;
    if (Date.now() - started >= WATCH_MS) return true;
  }
}

/** What a layout-1 sandbox holds, by collection, and whether a replica of it is running (for `sandgate migrate --dry-run`). */
export async function inspectLayoutOne(client: Redis | Cluster, prefix: string): Promise<{ records: Record<string, number>; running: boolean }> {
  const one = layoutOneKeys(prefix);
  const records = Object.fromEntries(await Promise.all(COLLECTIONS.map(async (c) => [c, await client.hlen(one.records(c))] as const)));
  return { records, running: await layoutOneRunning(client, prefix) };
}

/**
 * Takes a layout-1 sandbox to move: refuses (StoreError, one line) while a replica of that layout is
 * running, waits while another replica of today's is moving it (then resolves undefined: it is moved).
 */
export async function takeLayoutOne(
  client: Redis | Cluster,
  prefix: string,
  address: string,
  namesCard: (number: string) => boolean,
): Promise<EarlierSandbox | undefined> {
  const one = layoutOneKeys(prefix);
  const mine = `moving:${randomBytes(8).toString("hex")}`;
  for (const started = Date.now(); ;) {
    const holder = await client.get(one.lock);
    if (holder?.startsWith("moving:")) {
      if (Date.now() - started > MOVE_LEASE_MS)
        throw new StoreError(
          `Redis at ${address}: another replica began moving this sandbox to layout ${REDIS_LAYOUT} a minute ago and has not finished; start this one again`,
        );
      await new Promise((resolve) => setTimeout(resolve, 100));
      if ((await client.get(one.epoch)) === MOVED) return undefined;
      continue;
    }
    if (await layoutOneRunning(client, prefix)) {
      throw new StoreError(
        `Redis at ${address} holds this sandbox in layout 1, and a replica of the earlier Sandgate that wrote it is still running: stop every earlier replica, then start this one again (it moves the sandbox to layout ${REDIS_LAYOUT}), or run \`sandgate migrate --redis-url …\``,
      );
    }
    if (await client.set(one.lock, mine, "PX", MOVE_LEASE_MS, "NX")) break;
  }
  const release = async () =>
    void (await client.eval("if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0", 1, one.lock, mine));
  try {
    const meta = await client.hgetall(one.meta);
    const state = { version: STATE_VERSION, seed: meta.seed ?? "", counters: JSON.parse(meta.counters ?? "{}") as State["counters"] } as State;
    let records = 0;
    for (const c of COLLECTIONS) {
      const keys = await client.zrange(one.order(c), "0", "-1");
      const list: object[] = [];
      for (let i = 0; i < keys.length; i += 1000) {
        for (const v of await client.hmget(one.records(c), ...keys.slice(i, i + 1000))) if (v !== null) list.push(JSON.parse(v) as object);
      }
      (state as unknown as Record<string, object[]>)[c] = list;
      records += list.length;
    }
    upgradeRecords(state, namesCard);
    return {
      state,
      settings: meta.settings ?? "",
      records,
      async finish() {
        // a layout-1 replica started later finds the epoch changed and loads `meta`, which is no longer a hash: it fails, never starting empty
        for (const key of [...one.gone, one.meta]) await client.del(key);
        await client.set(one.meta, `this sandbox moved to Redis layout ${REDIS_LAYOUT}: upgrade this replica to a Sandgate that reads it`);
        await client.set(one.epoch, MOVED);
        await release();
      },
      abandon: release,
    };
  } catch (err) {
    await release();
    throw err;
  }
}
