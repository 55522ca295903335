//! The Lua scripts that change a shared crawl. Each runs atomically on one hash slot: a shard
//! (`{C/k}`: its hosts' queues, seen sets, records, ready set and owner table) or the crawl
//! (`{C}`: the page budget). Times are the Redis server's (`TIME`), so workers' clocks never
//! matter. Every script is safe to repeat after a connection dropped mid-call: repeating it
//! changes nothing more, is fenced by the lease token, or (`refill`, `reclaim`) gives back what a
//! lost answer held.
//!
//! Host scripts are fenced: they act only when the shard's owner table names the caller's lease
//! token, so a worker whose lease expired cannot touch a host another worker took over.

use redis::Script;

/// Helpers shared by the shard scripts.
const PRELUDE: &str = r#"
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function url_of(entry)
  return string.match(entry, '^[^\t]*')
end
-- A host's queue: a list served oldest first (R false: --order bfs), or a sorted set served by
-- score, rank * SEQ + arrival number (R true: the other orders); an entry in flight keeps its
-- score ("score NEWLINE entry") so that it goes back where it was. Under --order backlinks a
-- hash (zm) finds a queued URL's entry, so that a backlink can move it up: field the URL,
-- value the rest of the entry (the entry is the URL, a tab and its fields).
local SEQ = 1048576
local function qkey(P, host, R)
  if R then return P .. ':z:' .. host end
  return P .. ':q:' .. host
end
local function zmkey(P, host)
  return P .. ':zm:' .. host
end
local function index_entry(P, host, entry)
  local url = url_of(entry)
  redis.call('HSET', zmkey(P, host), url, string.sub(entry, #url + 1))
end
-- The ranked-queue argument: '0' lists, '1' sorted sets, '2' sorted sets ranked by backlinks.
local function ranked(arg)
  return arg ~= '0', arg == '2'
end
-- Moves a queued URL n ranks earlier (--order backlinks), keeping its arrival number; nothing
-- when it is not queued (in flight, fetched or dropped).
local function bump(P, host, url, n)
  local rest = redis.call('HGET', zmkey(P, host), url)
  if not rest then return end
  local entry = url .. rest
  local score = redis.call('ZSCORE', qkey(P, host, true), entry)
  if not score then return end
  score = tonumber(score)
  local rank = math.floor(score / SEQ)
  local seq = score - rank * SEQ
  redis.call('ZADD', qkey(P, host, true), math.max(rank - n, 0) * SEQ + seq, entry)
end
local function qlen(P, host, R)
  if R then return redis.call('ZCARD', qkey(P, host, R)) end
  return redis.call('LLEN', qkey(P, host, R))
end
local function push(P, host, entry, rank, R)
  if R then
    local seq = math.min(redis.call('HINCRBY', P .. ':host:' .. host, 'seq', 1), SEQ - 1)
    redis.call('ZADD', qkey(P, host, R), rank * SEQ + seq, entry)
  else
    redis.call('RPUSH', qkey(P, host, R), entry)
  end
end
-- Moves up to n queued entries of a host into flight (held by its owner until acknowledged).
local function pop(P, host, n, R)
  local f = P .. ':f:' .. host
  local got = {}
  if R then
    local z = redis.call('ZPOPMIN', qkey(P, host, R), n)
    for i = 1, #z, 2 do
      got[#got + 1] = z[i]
      redis.call('HSET', f, url_of(z[i]), z[i + 1] .. '\n' .. z[i])
      redis.call('HDEL', zmkey(P, host), url_of(z[i]))
    end
  else
    got = redis.call('LPOP', qkey(P, host, R), n)
    if not got then return {} end
    for _, e in ipairs(got) do
      redis.call('HSET', f, url_of(e), e)
    end
  end
  if #got > 0 then
    redis.call('HINCRBY', P .. ':stat', 'queued', -#got)
  end
  return got
end
-- Drops a host's queue when it has its pages (--max-pages-per-host): by the count in Redis,
-- or by `counted`, its owner's (ahead while acknowledgements are pending); returns how many.
local function over_cap(P, host, cap, counted, R)
  if cap < 0 then return -1 end
  local pages = tonumber(redis.call('HGET', P .. ':host:' .. host, 'pages') or '0')
  if math.max(pages, counted) < cap then return -1 end
  local n = qlen(P, host, R)
  if n > 0 then
    -- (never -0: Lua would send it as "-0", which is not an integer to Redis)
    redis.call('DEL', qkey(P, host, R))
    if R then redis.call('DEL', zmkey(P, host)) end
    redis.call('HINCRBY', P .. ':stat', 'queued', -n)
  end
  return n
end
-- Frees a host (its owner let it go): due again after `wait` ms when it has a queue.
local function let_go(P, ready, host, wait, R)
  local now = now_ms()
  redis.call('HDEL', P .. ':owner', host)
  redis.call('HSET', P .. ':host:' .. host, 'next', now + wait)
  if qlen(P, host, R) > 0 then
    redis.call('ZADD', ready, now + wait, host)
  else
    redis.call('ZREM', ready, host)
  end
end
-- Entries held in flight go back to the head of the queue (to their place, ranked); returns
-- how many.
local function unflight(P, host, R)
  local f = P .. ':f:' .. host
  local back = redis.call('HVALS', f)
  if R then
    for _, v in ipairs(back) do
      local score, entry = string.match(v, '^([^\n]*)\n(.*)$')
      if not score then score, entry = 0, v end
      redis.call('ZADD', qkey(P, host, R), score, entry)
      index_entry(P, host, entry)
    end
  else
    for i = #back, 1, -1 do
      redis.call('LPUSH', qkey(P, host, R), back[i])
    end
  end
  redis.call('HINCRBY', P .. ':stat', 'queued', #back)
  redis.call('DEL', f)
  return #back
end
-- The entries a host has in flight (their queue entries, without a ranked queue's score).
local function in_flight(P, host)
  local out = {}
  for _, v in ipairs(redis.call('HVALS', P .. ':f:' .. host)) do
    out[#out + 1] = string.match(v, '^[^\n]*\n(.*)$') or v
  end
  return out
end
-- Hands a host to a token: entries a previous owner held in flight go back to the head of
-- the queue; returns {host, wait ms, pages, queued left, entries, robots pairs, dropped,
-- robots ages: origin and ms since its robots.txt was fetched, where known}.
local function adopt(P, host, token, now, batch, cap, R)
  local back = unflight(P, host, R)
  redis.call('HSET', P .. ':owner', host, token)
  -- A held host always has its record: `renew` tells a lost shard by its absence.
  redis.call('HSETNX', P .. ':host:' .. host, 'next', 0)
  local h = redis.call('HGETALL', P .. ':host:' .. host)
  local nxt, pages, robots, ages = 0, 0, {}, {}
  for i = 1, #h, 2 do
    local k = h[i]
    if k == 'next' then nxt = tonumber(h[i + 1])
    elseif k == 'pages' then pages = tonumber(h[i + 1])
    elseif string.sub(k, 1, 3) == 'rb:' then
      robots[#robots + 1] = string.sub(k, 4)
      robots[#robots + 1] = h[i + 1]
    elseif string.sub(k, 1, 3) == 'rt:' then
      ages[#ages + 1] = string.sub(k, 4)
      ages[#ages + 1] = math.max(0, now - tonumber(h[i + 1]))
    end
  end
  local dropped = over_cap(P, host, cap, 0, R)
  -- At least what came back from flight, so a restarted owner finds all of it again.
  local entries = pop(P, host, math.max(batch, back), R)
  local left = qlen(P, host, R)
  return {host, math.max(0, nxt - now), pages, left, entries, robots, math.max(dropped, 0), ages}
end
-- Takes up to n due hosts of shard P (free ones whose time has come, or, when takeover is 1,
-- held ones whose lease expired), appending each adopted host to out; returns how many.
local function claim(P, token, n, lease, batch, cap, now, takeover, R, B, out)
  local ready = P .. ':ready'
  local look = n
  if takeover == 0 then look = n * 4 end
  local hosts = redis.call('ZRANGEBYSCORE', ready, '-inf', now, 'LIMIT', 0, look)
  if B then
    -- Hosts that other hosts' pages link to most go first (--order backlinks).
    local bl = {}
    for i, host in ipairs(hosts) do
      bl[host] = tonumber(redis.call('HGET', P .. ':host:' .. host, 'bl') or '0') * 1e6 - i
    end
    table.sort(hosts, function(a, b) return bl[a] > bl[b] end)
  end
  local taken = 0
  for _, host in ipairs(hosts) do
    if taken >= n then break end
    if takeover == 1 or redis.call('HEXISTS', P .. ':owner', host) == 0 then
      redis.call('ZADD', ready, now + lease, host)
      out[#out + 1] = adopt(P, host, token, now, batch, cap, R)
      taken = taken + 1
    end
  end
  return taken
end
"#;

/// `claim` KEYS: ready. ARGV: prefix, token, most hosts, lease ms, batch, cap (-1: none),
/// takeover (1: hosts whose lease expired too; 0: free hosts only), ranked (0: bfs, 1: the
/// other orders, 2: backlinks). Takes due hosts of one shard.
const CLAIM: &str = r#"
local n, lease, batch, cap = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local R, B = ranked(ARGV[8])
local out = {}
claim(ARGV[1], ARGV[2], n, lease, batch, cap, now_ms(), tonumber(ARGV[7]), R, B, out)
return out
"#;

/// `claim_all` (a single server only: it touches every shard's slot). KEYS: none. ARGV: crawl
/// prefix (`trawl:{C/`), shards, first shard, token, most hosts, lease ms, batch, cap,
/// takeover, ranked. One call instead of one per shard.
const CLAIM_ALL: &str = r#"
local base, shards, first, token = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]
local n, lease, batch, cap = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8])
local takeover = tonumber(ARGV[9])
local R, B = ranked(ARGV[10])
local now = now_ms()
local out = {}
for i = 0, shards - 1 do
  if #out >= n then break end
  local k = (first + i) % shards
  claim(base .. k .. '}', token, n - #out, lease, batch, cap, now, takeover, R, B, out)
end
return out
"#;

/// `busy_all` (a single server only). ARGV: crawl prefix, shards. Returns how many hosts have
/// queued or in-flight URLs, over every shard, or -1 - k when shard k has lost its marker.
const BUSY_ALL: &str = r#"
local total = 0
for k = 0, tonumber(ARGV[2]) - 1 do
  if redis.call('HEXISTS', ARGV[1] .. k .. '}:stat', 'made') == 0 then return -1 - k end
  total = total + redis.call('ZCARD', ARGV[1] .. k .. '}:ready')
end
return total
"#;

/// `due` KEYS: ready. How many hosts of one shard are due now (free ones whose time has come,
/// and held ones whose lease ran out), by the server's clock: a cluster's claim asks every
/// shard this first, then claims where there are some.
const DUE: &str = r#"
return redis.call('ZCOUNT', KEYS[1], '-inf', now_ms())
"#;

/// `reclaim` KEYS: ready. ARGV: prefix, token, worker prefix (`W#`), lease ms, batch, cap,
/// ranked.
/// A restarted worker takes back at once the hosts its previous process held, and those this
/// process took in a call whose answer was lost (its own token: asked again, they come again).
const RECLAIM: &str = r#"
local P, token, mine = ARGV[1], ARGV[2], ARGV[3]
local lease, batch, cap = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local R = ranked(ARGV[7])
local now = now_ms()
local owners = redis.call('HGETALL', P .. ':owner')
local out = {}
for i = 1, #owners, 2 do
  local host, tok = owners[i], owners[i + 1]
  if string.sub(tok, 1, #mine) == mine then
    redis.call('ZADD', KEYS[1], now + lease, host)
    out[#out + 1] = adopt(P, host, token, now, batch, cap, R)
  end
end
return out
"#;

/// `refill` KEYS: ready. ARGV: prefix, token, host, batch, wait ms, cap, the host's pages as
/// its owner counts them (acknowledged or not: a total, as in `ack`), ranked, give back, the
/// number of the host's entries the worker knows to be in flight.
/// Returns {'lost'}, {'more', entries, dropped}, {'busy'} (entries still unacknowledged) or
/// {'released', dropped}: nothing queued or in flight, so the host is free again. Given back
/// (the worker holds more than its share), a host whose entries are all acknowledged is freed
/// with its queue, due again after `wait`, for another worker to take.
/// Popping is not safe to repeat by itself: a batch whose answer was lost (or that a cluster
/// connection sent again after a dropped connection) would stay in flight for good. So when
/// more entries are in flight than the worker knows of, all of them come first in 'more' (the
/// worker keeps those it lacks).
const REFILL: &str = r#"
local P, token, host = ARGV[1], ARGV[2], ARGV[3]
local batch, wait, cap, counted = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local R, give, known = ranked(ARGV[8]), ARGV[9] == '1', tonumber(ARGV[10])
if redis.call('HGET', P .. ':owner', host) ~= token then return {'lost'} end
local dropped = math.max(over_cap(P, host, cap, counted, R), 0)
local out = {}
if redis.call('HLEN', P .. ':f:' .. host) > known then out = in_flight(P, host) end
if not give then
  for _, e in ipairs(pop(P, host, batch, R)) do out[#out + 1] = e end
end
if #out > 0 then return {'more', out, dropped} end
if redis.call('HLEN', P .. ':f:' .. host) > 0 then return {'busy'} end
let_go(P, KEYS[1], host, wait, R)
return {'released', dropped}
"#;

/// `ack` KEYS: ready. ARGV: prefix, token, host, wait ms, pages (the host's crawl-wide total
/// as its owner counts it: a total, not an increment, so that an ack repeated after a lost
/// answer counts nothing twice), lease ms, n, n urls, then origin/robots pairs. Acknowledges
/// finished entries, saves the host's clock, page count and robots.txt texts, and renews the
/// lease. Returns 1, or 0 when the lease is lost.
const ACK: &str = r#"
local P, token, host = ARGV[1], ARGV[2], ARGV[3]
local wait, pages, lease, n = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
if redis.call('HGET', P .. ':owner', host) ~= token then return 0 end
local now = now_ms()
for i = 8, 7 + n do
  redis.call('HDEL', P .. ':f:' .. host, ARGV[i])
end
local h = P .. ':host:' .. host
if pages > tonumber(redis.call('HGET', h, 'pages') or '0') then
  redis.call('HSET', h, 'pages', pages)
end
redis.call('HSET', h, 'next', now + wait)
for i = 8 + n, #ARGV, 2 do
  redis.call('HSET', h, 'rb:' .. ARGV[i], ARGV[i + 1], 'rt:' .. ARGV[i], now)
end
redis.call('ZADD', KEYS[1], 'XX', now + lease, host)
return 1
"#;

/// `renew` KEYS: ready. ARGV: prefix, token, lease ms, hosts. Returns the hosts no longer held,
/// as `!host` when the host's record is gone too: Redis lost the shard's state (a record is
/// never deleted, and `adopt` makes one for every host it hands out; links found elsewhere
/// may queue the host again, so its seen set can be back).
const RENEW: &str = r#"
local P, token, lease = ARGV[1], ARGV[2], tonumber(ARGV[3])
local now = now_ms()
local lost = {}
for i = 4, #ARGV do
  if redis.call('HGET', P .. ':owner', ARGV[i]) == token then
    redis.call('ZADD', KEYS[1], 'XX', now + lease, ARGV[i])
  elseif redis.call('EXISTS', P .. ':host:' .. ARGV[i]) == 0 then
    lost[#lost + 1] = '!' .. ARGV[i]
  else
    lost[#lost + 1] = ARGV[i]
  end
end
return lost
"#;

/// `release` KEYS: ready. ARGV: prefix, token, host, wait ms, ranked. Gives a host up (shutdown):
/// entries still in flight go back to the head of its queue; it is due again after `wait`.
const RELEASE: &str = r#"
local P, token, host, wait = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
local R = ranked(ARGV[5])
if redis.call('HGET', P .. ':owner', host) ~= token then return 0 end
unflight(P, host, R)
let_go(P, KEYS[1], host, wait, R)
return 1
"#;

/// `admit` KEYS: ready. ARGV: prefix, ranked, then host/fingerprint/entry/rank quadruples.
/// Queues each URL not seen before on its host; a host with new work that nobody holds becomes
/// due. Returns 1 per queued URL, 0 per duplicate. Under `--order backlinks` (ranked 2) a
/// duplicate is a backlink: a queued URL moves a rank up; and two other quadruples count
/// backlinks found by a worker's own cache of recent links: fingerprint `u` (entry: the URL,
/// rank: how many) and `h` (the host gained that many other hosts' pages linking in). They
/// return -1.
const ADMIT: &str = r#"
local P = ARGV[1]
local R, B = ranked(ARGV[2])
local now = now_ms()
local res = {}
for i = 3, #ARGV, 4 do
  local host, fp = ARGV[i], ARGV[i + 1]
  if fp == 'u' then
    bump(P, host, ARGV[i + 2], tonumber(ARGV[i + 3]))
    res[#res + 1] = -1
  elseif fp == 'h' then
    redis.call('HINCRBY', P .. ':host:' .. host, 'bl', tonumber(ARGV[i + 3]))
    res[#res + 1] = -1
  elseif redis.call('SADD', P .. ':seen:' .. host, fp) == 1 then
    push(P, host, ARGV[i + 2], tonumber(ARGV[i + 3]), R)
    if B then index_entry(P, host, ARGV[i + 2]) end
    redis.call('HINCRBY', P .. ':stat', 'queued', 1)
    redis.call('HINCRBY', P .. ':stat', 'seen', 1)
    if redis.call('HEXISTS', P .. ':owner', host) == 0 then
      redis.call('ZADD', KEYS[1], 'NX', now, host)
    end
    res[#res + 1] = 1
  else
    if B then bump(P, host, url_of(ARGV[i + 2]), 1) end
    res[#res + 1] = 0
  end
end
return res
"#;

/// `reserve` KEYS: permits. ARGV: fingerprint, max pages. A page may be archived if it holds a
/// permit already (a refetch after a takeover) or one is left. Returns 1 or 0.
const RESERVE: &str = r#"
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then return 1 end
if redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], 'r')
return 1
"#;

/// `commit` KEYS: permits, budget. ARGV: fingerprints of pages archived and saved. Returns the
/// number of committed pages.
const COMMIT: &str = r#"
for i = 1, #ARGV do
  if redis.call('HGET', KEYS[1], ARGV[i]) == 'r' then
    redis.call('HSET', KEYS[1], ARGV[i], 'c')
    redis.call('HINCRBY', KEYS[2], 'committed', 1)
  end
end
return tonumber(redis.call('HGET', KEYS[2], 'committed') or '0')
"#;

/// The compiled scripts (EVALSHA, loaded again on NOSCRIPT after a server restart).
pub struct Scripts {
    /// See [`CLAIM`].
    pub claim: Script,
    /// See [`CLAIM_ALL`].
    pub claim_all: Script,
    /// See [`BUSY_ALL`].
    pub busy_all: Script,
    /// See [`DUE`].
    pub due: Script,
    /// See [`RECLAIM`].
    pub reclaim: Script,
    /// See [`REFILL`].
    pub refill: Script,
    /// See [`ACK`].
    pub ack: Script,
    /// See [`RENEW`].
    pub renew: Script,
    /// See [`RELEASE`].
    pub release: Script,
    /// See [`ADMIT`].
    pub admit: Script,
    /// See [`RESERVE`].
    pub reserve: Script,
    /// See [`COMMIT`].
    pub commit: Script,
}

impl Scripts {
    /// Compiles every script.
    pub fn new() -> Self {
        let shard = |body: &str| Script::new(&format!("{PRELUDE}{body}"));
        Scripts {
            claim: shard(CLAIM),
            claim_all: shard(CLAIM_ALL),
            busy_all: Script::new(BUSY_ALL),
            due: shard(DUE),
            reclaim: shard(RECLAIM),
            refill: shard(REFILL),
            ack: shard(ACK),
            renew: shard(RENEW),
            release: shard(RELEASE),
            admit: shard(ADMIT),
            reserve: Script::new(RESERVE),
            commit: Script::new(COMMIT),
        }
    }
}

impl Default for Scripts {
    fn default() -> Self {
        Self::new()
    }
}
