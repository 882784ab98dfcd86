// The keys and Lua scripts of the shared store (redis-store.ts). Each script runs atomically inside
// Redis and declares every key it touches; a merchant's keys share its hash tag, so on a Redis
// Cluster each script runs on the one node that holds that merchant.
//
// One merchant M (a partition), under <prefix>m:{M}: (on a Cluster, an M starting with "}": <prefix>m}:{~M}:)
//   lock                the merchant's turn: a random token with a lease (PX)
//   epoch               "<generation>/<random>": names this installation of the merchant (its initial records written)
//   version             +1 per commit; the stream entry of commit v has the id "<v>-1"
//   changes             a capped stream: each commit's records, removals, counters and nth counts (d), and its fence (f);
//                       about STREAM_BYTES of entries (the entry just added tells how many: 16 to 1,000)
//   fenced              hash: fences of commits that did not land, and never will (kept a minute)
//   seq                 the order counter of o:<collection>
//   counters            the merchant's id counters (JSON)
//   issued              the highest id counters it ever used (JSON), kept through resets and new generations:
//                       an installation starts its counters there, so no id is ever issued twice
//   nth:young, nth:old  nth-call counts in two generations, like the in-process ones
//   c:<collection>      hash: key → record as JSON
//   o:<collection>      sorted set: key by first-write order (lists stay oldest first on every replica)
// The sandbox, under <prefix>global:{g}:
//   lock                the settings' turn (a global scenario switch, the clock, a reset of everything)
//   settings            hash: v (+1 per change), json (clock offset, scenario choice), seed, gen (the generation),
//                       layout (this layout's number, see redis-layout.ts)
//   merchants           set: the merchants installed in this generation
//   where               hash: "<kind>:<id>" → merchant (a page, payment, refund, ... found by id alone)
//   due                 sorted set: merchant by when its earliest time-driven work falls due (sandbox ms)
//   requests            a capped stream: every replica's request log entries
//   replicas            hash: each running replica → its layout, version and when it was last seen (every 2 s)
//   crosstalk           a pub/sub channel: what replicas say to each other, what each holds included (crosstalk.ts)
import { KEY_FIELD, type Collection } from "../../domain/types.js";
import type { Link } from "./redis-link.js";
import { StoreError } from "../store.js";

export const COLLECTIONS = Object.keys(KEY_FIELD) as Collection[];

/**
 * Where a merchant's keys start. The id is their hash tag, which on a Cluster puts them all on one
 * node. On a Cluster, an id the tag cannot carry (empty, or starting with "}": "m:{}x}:lock" has an
 * empty tag, so Redis would hash each whole key and a script over them would fail) goes under
 * "m}:{~<id>}" instead (tag "~"), which no other id's keys begin with. (One Redis has no slots: its
 * keys stay where earlier versions wrote them.)
 */
const partitionOf = (prefix: string, merchantId: string, cluster: boolean) =>
  cluster && (merchantId === "" || merchantId.startsWith("}")) ? `${prefix}m}:{~${merchantId}}` : `${prefix}m:{${merchantId}}`;

/** The keys of one merchant, in the order the scripts declare them. */
export function partitionKeys(prefix: string, merchantId: string, cluster: boolean) {
  const start = partitionOf(prefix, merchantId, cluster);
  const k = (name: string) => `${start}:${name}`;
  return {
    lock: k("lock"),
    epoch: k("epoch"),
    version: k("version"),
    changes: k("changes"),
    seq: k("seq"),
    counters: k("counters"),
    issued: k("issued"),
    nthYoung: k("nth:young"),
    nthOld: k("nth:old"),
    fenced: k("fenced"),
    records: COLLECTIONS.map((c) => k(`c:${c}`)),
    order: COLLECTIONS.map((c) => k(`o:${c}`)),
  };
}
export type PartitionKeys = ReturnType<typeof partitionKeys>;

export function globalKeys(prefix: string) {
  const k = (name: string) => `${prefix}global:{g}:${name}`;
  return {
    lock: k("lock"),
    settings: k("settings"),
    merchants: k("merchants"),
    where: k("where"),
    due: k("due"),
    requests: k("requests"),
    snapshots: k("snapshots"),
    snapshotEnds: k("snapshots:ends"),
    replicas: k("replicas"),
    crosstalk: k("crosstalk"),
  };
}

/** KEYS of ACQUIRE and CHANGES: lock, epoch, version, changes. */
export const acquireKeys = (p: PartitionKeys) => [p.lock, p.epoch, p.version, p.changes];
/** KEYS of COMMIT: lock, version, changes, nth:young, nth:old, seq, counters, the record hashes, the order sets, fenced. */
export const commitKeys = (p: PartitionKeys) => [p.lock, p.version, p.changes, p.nthYoung, p.nthOld, p.seq, p.counters, ...p.records, ...p.order, p.fenced];
/** KEYS of RESOLVE: epoch, version, changes, fenced. */
export const resolveKeys = (p: PartitionKeys) => [p.epoch, p.version, p.changes, p.fenced];
/** KEYS of INSTALL and DROP_OLD: lock, epoch, version, changes, nth:young, nth:old, seq, counters, issued, the record hashes, the order sets. */
export const installKeys = (p: PartitionKeys) => [
  p.lock,
  p.epoch,
  p.version,
  p.changes,
  p.nthYoung,
  p.nthOld,
  p.seq,
  p.counters,
  p.issued,
  ...p.records,
  ...p.order,
];

/** Lua: the highest value of each counter in any of the JSON texts given (false, a missing key, is skipped). */
const HIGHEST = `
local function highest(...)
  local out = {}
  for i = 1, select('#', ...) do
    local text = select(i, ...)
    if text then
      for k, v in pairs(cjson.decode(text)) do
        if type(v) == 'number' and (out[k] == nil or out[k] < v) then out[k] = v end
      end
    end
  end
  return cjson.encode(out)
end
`;

/**
 * Lua taking the lock KEYS[1] for the token ARGV[1] with a lease of ARGV[2] ms, if free or already
 * the token's (its lease renewed: a reply lost on the way, the caller asks again); otherwise the
 * script returns `taken` (another holds it). ACQUIRE and TAKE share it.
 */
const holdLock = (taken: string) => `local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then redis.call('PEXPIRE', KEYS[1], ARGV[2])
elseif holder then return ${taken}
else redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) end`;

/**
 * Takes the merchant's turn if free or already the caller's (a reply lost on the way: the caller
 * asks again; ARGV[1] = '' only reads: a catch-up without the turn), and says what the caller's copy needs. Returns {0} when another replica has the turn; {3} when the
 * merchant is not installed in this generation (the caller installs it); {2, epoch, version} when the
 * caller must load it whole (another installation, or it fell behind the stream); {1, epoch, version,
 * entry...} with the commits it missed.
 * KEYS: see acquireKeys. ARGV: token, lease ms, generation, the caller's epoch and version.
 */
const ACQUIRE = `
if ARGV[1] ~= '' then ${holdLock("{0}")} end
local epoch = redis.call('GET', KEYS[2])
if not epoch or string.sub(epoch, 1, #ARGV[3] + 1) ~= ARGV[3] .. '/' then return {3} end
local version = tonumber(redis.call('GET', KEYS[3]) or '0')
if epoch ~= ARGV[4] then return {2, epoch, version} end
local mine = tonumber(ARGV[5])
if version == mine then return {1, epoch, version} end
local first = (mine + 1) .. '-1'
local entries = redis.call('XRANGE', KEYS[4], first, '+')
if #entries == 0 or entries[1][1] ~= first then return {2, epoch, version} end
local out = {1, epoch, version}
for _, e in ipairs(entries) do out[#out + 1] = e[2][2] end
return out
`;

/**
 * How much of a merchant's changes stream is kept, about: each commit trims it to as many entries of
 * its own entry's size as fit (at least STREAM_MIN, at most STREAM_MAX). A payment's entry (~1.5 KB)
 * keeps ~700 behind it, a capture of 50 payments' (~65 KB) or a merchant of 100 accounts' (~35 KB)
 * 16 to 30: a merchant's stream stays near a megabyte whatever its records weigh, where 1,000 whole
 * entries of those would hold 35 to 65 MB. A replica further behind than the stream goes back
 * reloads the merchant (ACQUIRE's status 2), as it always has past 1,000.
 */
export const STREAM_BYTES = 1_048_576;
const STREAM_MIN = 16;
const STREAM_MAX = 1_000;

/**
 * Writes a unit's changes if the caller still holds the merchant's turn, announces them on the
 * stream with the commit's fence (a random id) and renews (or gives up) the turn. Returns the new
 * version, -1 when the turn was lost, -2 when the fence was declared not landed (RESOLVE).
 * The stream entry's d is {"r":[[collection number, record], ...], <rest>}, built here from the
 * records sent (so each record crosses the wire once).
 * KEYS: see commitKeys. ARGV: token, lease ms, release (1/0), nth generation size, the entry's rest
 * (its other members as JSON text), counters ('' unchanged), fence, then n records (collection
 * number from 1, key, JSON), m removals (collection number, key), p nth counts (key, count), each
 * list after its length.
 */
const COMMIT = `
if redis.call('HEXISTS', KEYS[#KEYS], ARGV[7]) == 1 then return -2 end
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
local collections = (#KEYS - 8) / 2
local i = 8
local n = tonumber(ARGV[i]); i = i + 1
local written = {}
for j = 1, n do
  local c, k = tonumber(ARGV[i]), ARGV[i + 1]
  if redis.call('HSET', KEYS[7 + c], k, ARGV[i + 2]) == 1 then
    redis.call('ZADD', KEYS[7 + collections + c], redis.call('INCR', KEYS[6]), k)
  end
  written[j] = '[' .. ARGV[i] .. ',' .. ARGV[i + 2] .. ']'
  i = i + 3
end
n = tonumber(ARGV[i]); i = i + 1
for _ = 1, n do
  local c = tonumber(ARGV[i])
  redis.call('HDEL', KEYS[7 + c], ARGV[i + 1])
  redis.call('ZREM', KEYS[7 + collections + c], ARGV[i + 1])
  i = i + 2
end
if ARGV[6] ~= '' then redis.call('SET', KEYS[7], ARGV[6]) end
n = tonumber(ARGV[i]); i = i + 1
for _ = 1, n do redis.call('HSET', KEYS[4], ARGV[i], ARGV[i + 1]); i = i + 2 end
if n > 0 and redis.call('HLEN', KEYS[4]) >= tonumber(ARGV[4]) then redis.call('RENAME', KEYS[4], KEYS[5]) end
local version = redis.call('INCR', KEYS[2])
local entry = '{"r":[' .. table.concat(written, ',') .. '],' .. ARGV[5] .. '}'
local keep = math.max(${STREAM_MIN}, math.min(${STREAM_MAX}, math.floor(${STREAM_BYTES} / #entry)))
redis.call('XADD', KEYS[3], 'MAXLEN', '~', tostring(keep), version .. '-1', 'd', entry, 'f', ARGV[7])
if ARGV[3] == '1' then redis.call('DEL', KEYS[1]) else redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return version
`;

/**
 * Whether a commit whose reply was lost landed: its version (base + 1) when the stream holds it
 * with its fence. Otherwise its fence is declared not landed, so that the commit, should it still
 * reach Redis late, is refused (COMMIT's -2): 0. When the answer cannot be told (the merchant was
 * installed again meanwhile, or the stream no longer goes back that far): -1, fenced all the same.
 * KEYS: see resolveKeys. ARGV: the caller's epoch, the version its commit started from, the fence, how long fences are kept (ms).
 */
const RESOLVE = `
local landed = tonumber(ARGV[2]) + 1
local unknown = redis.call('GET', KEYS[1]) ~= ARGV[1]
if not unknown then
  local at = landed .. '-1'
  local entry = redis.call('XRANGE', KEYS[3], at, at)
  if #entry == 1 and entry[1][2][4] == ARGV[3] then return landed end
  unknown = #entry == 0 and tonumber(redis.call('GET', KEYS[2]) or '0') >= landed
end
redis.call('HSET', KEYS[4], ARGV[3], 1)
redis.call('PEXPIRE', KEYS[4], ARGV[4])
if unknown then return -1 end
return 0
`;

/**
 * Takes a turn (the settings') if free or already the caller's (a reply lost on the way: the
 * caller asks again). Returns 1 when the caller has it, 0 when another does. KEYS: lock. ARGV: token, lease ms.
 */
export const TAKE = `
${holdLock("0")}
return 1
`;

/**
 * Seeds the merchant (first use in a generation, or a reset of it) if the caller holds its turn:
 * everything it had goes but the ids it issued, its initial records are written, the turn is
 * renewed. Its counters start at the highest of the given ones, its last ones and those it ever
 * issued, so no id comes back. Returns those counters (JSON), or -1 when the turn was lost.
 * KEYS: see installKeys. ARGV: token, lease ms, new epoch, counters JSON, then n records (collection
 * number from 1, key, JSON) after their count.
 */
export const INSTALL = `${HIGHEST}
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
local counters = highest(ARGV[4], redis.call('GET', KEYS[8]), redis.call('GET', KEYS[9]))
for i = 2, #KEYS do if i ~= 9 then redis.call('DEL', KEYS[i]) end end
local collections = (#KEYS - 9) / 2
local n = tonumber(ARGV[5])
-- records of one collection come together: written 200 to a command (a merchant of 60,000
-- payments in one call per command took over a second, which the link takes for a silent Redis)
local seq, j = 0, 0
while j < n do
  local c = tonumber(ARGV[6 + j * 3])
  local fields, members = {}, {}
  while j < n and #fields < 400 and tonumber(ARGV[6 + j * 3]) == c do
    local i = 6 + j * 3
    seq = seq + 1
    fields[#fields + 1] = ARGV[i + 1]
    fields[#fields + 1] = ARGV[i + 2]
    members[#members + 1] = seq
    members[#members + 1] = ARGV[i + 1]
    j = j + 1
  end
  redis.call('HSET', KEYS[9 + c], unpack(fields))
  redis.call('ZADD', KEYS[9 + collections + c], unpack(members))
end
if seq > 0 then redis.call('SET', KEYS[7], seq) end
redis.call('SET', KEYS[8], counters)
redis.call('SET', KEYS[9], counters)
redis.call('SET', KEYS[2], ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return counters
`;

/** Extends a turn's lease if the caller still holds it (a unit longer than the lease). KEYS: lock. ARGV: token, lease ms. */
const RENEW = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
`;

/** Gives a turn up if the caller still holds it. KEYS: lock. ARGV: token. */
const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1
`;

/**
 * The sandbox's settings, created when Redis has none; a sandbox of layout 2 (no `layout`) is marked
 * as today's, the keys being the same. Returns them as a flat field/value list.
 * KEYS: settings. ARGV: seed, generation, settings JSON, layout.
 */
export const SETTINGS_INIT = `
if redis.call('EXISTS', KEYS[1]) == 0 then redis.call('HSET', KEYS[1], 'v', 0, 'seed', ARGV[1], 'gen', ARGV[2], 'json', ARGV[3], 'layout', ARGV[4])
else redis.call('HSETNX', KEYS[1], 'layout', ARGV[4]) end
return redis.call('HGETALL', KEYS[1])
`;

/**
 * Writes the settings if the caller holds their turn; a new generation (a reset of everything)
 * also forgets every merchant, where each record is and what falls due when, once (sent again
 * after a lost reply, it does not forget what was installed since). Returns the new version, or -1
 * when the turn was lost.
 * KEYS: lock, settings, merchants, where, due. ARGV: token, lease ms, settings JSON, new generation ('' unchanged).
 */
export const SETTINGS_WRITE = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
redis.call('HSET', KEYS[2], 'json', ARGV[3])
if ARGV[4] ~= '' and redis.call('HGET', KEYS[2], 'gen') ~= ARGV[4] then
  redis.call('HSET', KEYS[2], 'gen', ARGV[4])
  redis.call('DEL', KEYS[3], KEYS[4], KEYS[5])
end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return redis.call('HINCRBY', KEYS[2], 'v', 1)
`;

/**
 * Drops a merchant's keys if they belong to an older generation (after a reset of everything; a
 * replica may have installed it again meanwhile, which is kept), but for the ids it issued. KEYS: see installKeys. ARGV: generation.
 */
export const DROP_OLD = `${HIGHEST}
local epoch = redis.call('GET', KEYS[2])
if epoch and string.sub(epoch, 1, #ARGV[1] + 1) == ARGV[1] .. '/' then return 0 end
local issued = highest(redis.call('GET', KEYS[8]), redis.call('GET', KEYS[9]))
for i = 2, #KEYS do redis.call('DEL', KEYS[i]) end
redis.call('SET', KEYS[9], issued)
return 1
`;

/** A script as a function of its keys and arguments (EVALSHA, sent again only when Redis lost it). */
export type Script = (keys: string[], args: (string | number)[]) => Promise<unknown>;

export interface Scripts {
  acquire: Script;
  /** sent once: a commit whose reply was lost is resolved by its fence (Partition.commit) */
  commit: Script;
  install: Script;
  release: Script;
  renew: Script;
  resolve: Script;
}

/**
 * A script on this link, called with its keys and arguments; sent again on a new connection when
 * its reply was lost (link.again), unless `once`: every script but COMMIT may run twice.
 */
export function defineScript(link: Link, name: string, lua: string, once = false): Script {
  const client = link.client;
  client.defineCommand(name, { lua });
  // keys and arguments go as two lists (the client flattens them): spread into one call, an install of
  // 50,000 records overflowed the stack
  const call = (client as unknown as Record<string, (n: number, keys: string[], args: (string | number)[]) => Promise<unknown>>)[name]!;
  if (once) return (keys, args) => call.call(client, keys.length, keys, args);
  return (keys, args) => link.again(() => call.call(client, keys.length, keys, args));
}

/** The partition's scripts on this link: one definition each. */
export function defineScripts(link: Link): Scripts {
  const define = (name: string, lua: string, once = false) => defineScript(link, name, lua, once);
  return {
    acquire: define("sandgateAcquire", ACQUIRE),
    commit: define("sandgateCommit", COMMIT, true),
    install: define("sandgateInstall", INSTALL),
    release: define("sandgateRelease", RELEASE),
    renew: define("sandgateRenew", RENEW),
    resolve: define("sandgateResolve", RESOLVE),
  };
}

/**
 * On a Cluster, braces in the prefix would be read as every key's hash tag: every key on one node
 * ("team{1}:"), or each key hashed whole and every script refused ("{}"). Refused before connecting.
 */
export function checkPrefix(options: { cluster?: boolean | undefined; prefix: string }): void {
  if (options.cluster && /[{}]/.test(options.prefix)) {
    throw new StoreError(
      `--redis-prefix "${options.prefix}" holds { or }: on a Redis Cluster they would choose the hash slot of every key; pick a prefix without braces`,
    );
  }
}
