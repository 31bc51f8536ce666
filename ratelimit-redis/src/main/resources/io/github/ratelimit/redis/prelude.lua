#!lua
-- Shared by every rate limit script; the algorithm's script is appended to it.
--
-- One call decides a batch of requests of one policy, one after the other, in order. Request i has the cost
-- ARGV[7 + i] and the key KEYS[i] (the sliding log: KEYS[2i - 1] and KEYS[2i]); two requests may share a key.
-- All keys of a call share one hash slot (one Cluster node).
--
-- ARGV[1] now in ms since the epoch, or "" to use Redis TIME (production; tests drive time explicitly)
-- ARGV[2] limit   ARGV[3] window_ms   ARGV[4] burst
-- ARGV[5] units_per_token   ARGV[6] units_per_ms   (the rate limit/window as exact integers)
-- ARGV[7] least TTL in ms (0 in production: keys expire as soon as their state is back to fresh)
--
-- Returns, for each request: allowed (1|0), remaining, reset_after_ms, retry_after_ms (-1: never), and
-- next_unit_ms: until more than remaining units are available (the effective window of the RateLimit fields).
--
-- Except for the fixed window (see its script), state is one string per key: doubles packed with struct.pack (8
-- bytes each), so a decision costs two commands, GET and SET. Consecutive requests for the same key (a hot key) share
-- them: the state is read once, brought to the current time, kept while the key repeats, and written once. (Within a
-- call every request of a key sees the same time: now, or the key's last admission if that is later, since time
-- never runs backwards for a key.) A key's expiry is set only when its state must outlive it (SET ... PX); otherwise
-- SET ... KEEPTTL leaves it alone, which halves the cost of a write. A value of another length (another version's)
-- is ignored. Expiries count from Redis's own now, not from a key's clamped time, so that a key whose time ran
-- ahead of a slower clock after a failover never expires before its state stops mattering.
-- Needs Redis 7.0+ (PEXPIRE ... NX; KEEPTTL; the shebang above). Redis replicates a script's effects, so TIME may
-- precede writes. The shebang (with no flags) makes Redis refuse the whole script when it is out of memory, rather
-- than let a script whose first write frees memory (DEL) go on writing past maxmemory.
--
-- Exactness: Lua numbers are doubles, and every value here is an integer below 2^51 (the policy checks it). For
-- integers 0 <= a, b < 2^52, math.floor(a / b), math.ceil(a / b) and a % b are exact: the rounded quotient could
-- only cross an integer if a + b >= 2^53. So this integer arithmetic matches the Java store's to the unit.
-- The code is written flat, without helper functions, because every Lua call costs a decision measurable time.

local now
if ARGV[1] ~= '' then
  now = tonumber(ARGV[1])
else
  local time = redis.call('TIME')
  now = time[1] * 1000 + math.floor(time[2] / 1000)
end
local limit, window, burst = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local per_token, per_ms, least_ttl = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local result, n = {}, 0

