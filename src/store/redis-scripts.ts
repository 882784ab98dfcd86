// The Lua scripts of the shared store (redis-store.ts). Each runs atomically inside Redis, so a
// turn is taken, a unit's changes are written and the change is announced in one step.
// Keys under the prefix:
//   lock                the sandbox-wide turn: a random token with a lease (PX)
//   epoch               names the current seeding: a reset or an emptied Redis gives a new one
//   version             +1 per commit; the stream entry of commit v has the id "<v>-1"
//   changes             a capped stream: each commit's records, removals, counters, settings, nth counts
//   c:<collection>      hash: key → record as JSON
//   o:<collection>      sorted set: key by first-write order (lists stay oldest first on every replica)
//   seq                 the order's counter
//   meta                hash: seed, counters (id counters, JSON), settings (clock offset, scenario choice)
//   nth:young, nth:old  nth-call counts in two generations, like the in-process ones
//   requests            a capped stream: every replica's request log entries (with what went over the wire)

/**
 * Takes the turn if free. Returns {0} when another replica has it; {3} when Redis holds no sandbox
 * yet (the caller seeds it); {2, epoch, version, requests} when the caller must load everything
 * (another seeding, or it fell behind the stream); {1, epoch, version, requests, entry...} with the
 * commits it missed. `requests` is {last id, entry...}: the request log entries logged since the
 * caller's last one (all that are kept, the first time).
 * KEYS: lock, epoch, version, changes, requests. ARGV: token, lease ms, the caller's epoch, version
 * and last request log id ('' the first time).
 */
export const ACQUIRE = `
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return {0} end
local epoch = redis.call('GET', KEYS[2])
if not epoch then return {3} end
local logged = redis.call('XRANGE', KEYS[5], ARGV[5] == '' and '-' or '(' .. ARGV[5], '+')
local requests = {ARGV[5]}
for _, e in ipairs(logged) do requests[1] = e[1]; requests[#requests + 1] = e[2][2] end
local version = tonumber(redis.call('GET', KEYS[3]) or '0')
if epoch ~= ARGV[3] then return {2, epoch, version, requests} end
local mine = tonumber(ARGV[4])
if version == mine then return {1, epoch, version, requests} end
local first = (mine + 1) .. '-1'
local entries = redis.call('XRANGE', KEYS[4], first, '+')
if #entries == 0 or entries[1][1] ~= first then return {2, epoch, version, requests} end
local out = {1, epoch, version, requests}
for _, e in ipairs(entries) do out[#out + 1] = e[2][2] end
return out
`;

/**
 * Writes a unit's changes if the caller still holds the turn, announces them on the stream and
 * renews (or gives up) the turn. Returns the new version, or -1 when the turn was lost.
 * KEYS: lock, version, changes, meta, nth:young, nth:old, seq.
 * ARGV: token, lease ms, release (1/0), key prefix, nth generation size, stream entry, counters
 * ('' unchanged), settings ('' unchanged), then n records (collection, key, JSON), m removals
 * (collection, key), p nth counts (key, count), each list after its length.
 */
export const COMMIT = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
local prefix = ARGV[4]
local i = 9
local n = tonumber(ARGV[i]); i = i + 1
for _ = 1, n do
  local c, k = ARGV[i], ARGV[i + 1]
  if redis.call('HSET', prefix .. 'c:' .. c, k, ARGV[i + 2]) == 1 then
    redis.call('ZADD', prefix .. 'o:' .. c, redis.call('INCR', KEYS[7]), k)
  end
  i = i + 3
end
n = tonumber(ARGV[i]); i = i + 1
for _ = 1, n do
  redis.call('HDEL', prefix .. 'c:' .. ARGV[i], ARGV[i + 1])
  redis.call('ZREM', prefix .. 'o:' .. ARGV[i], ARGV[i + 1])
  i = i + 2
end
if ARGV[7] ~= '' then redis.call('HSET', KEYS[4], 'counters', ARGV[7]) end
if ARGV[8] ~= '' then redis.call('HSET', KEYS[4], 'settings', ARGV[8]) end
n = tonumber(ARGV[i]); i = i + 1
for _ = 1, n do redis.call('HSET', KEYS[5], ARGV[i], ARGV[i + 1]); i = i + 2 end
if n > 0 and redis.call('HLEN', KEYS[5]) >= tonumber(ARGV[5]) then redis.call('RENAME', KEYS[5], KEYS[6]) end
local version = redis.call('INCR', KEYS[2])
redis.call('XADD', KEYS[3], 'MAXLEN', '~', '10000', version .. '-1', 'd', ARGV[6])
if ARGV[3] == '1' then redis.call('DEL', KEYS[1]) else redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return version
`;

/** Gives the turn up if the caller still holds it. KEYS: lock. ARGV: token. */
export const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1
`;
