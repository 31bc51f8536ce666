#!lua
-- Which parameter sets policies are being decided with, by the instances sharing this Redis: one hash per policy
-- name and variant, a field per parameter set ('<algorithm>:<limit>:<window_ms>:<burst>|<variant>'), valued with
-- the last time an instance deciding with it said so. An instance says so before its first decision of a variant and
-- then at least every second while it decides it, so that every instance learns of another configuration of the same
-- policy and variant (a rolling deploy, a tenant's limits changed on one instance first) and, while both live, admits
-- only what both admit. One call says so for several variants of one name (their hashes share a hash tag), each
-- touching only its own hash: what a variant costs does not depend on how many others there are.
--
-- KEYS[k] the hash of a policy name and variant
-- ARGV[1] now in ms since the epoch, or "" to use Redis TIME (production; tests drive time explicitly)
-- ARGV[2] how long a field stays live after it was last set, in ms
-- ARGV[3] least TTL of a hash in ms (0 in production)
-- ARGV[4] the most other fields to return per hash
-- ARGV[4 + k] the calling instance's field in KEYS[k]
--
-- Returns now, then for each key in order the number of other live fields and those fields, the most recently set
-- first and at most ARGV[4] of them. Fields past their life are deleted, so a hash holds the sets in use; so is a
-- field set later than now plus its life, which no instance on this Redis's clock wrote, so that a stray writer cannot
-- keep a set alive for ever.

local now
if ARGV[1] ~= '' then
  now = tonumber(ARGV[1])
else
  local time = redis.call('TIME')
  now = time[1] * 1000 + math.floor(time[2] / 1000)
end
local live_ms = tonumber(ARGV[2])
local ttl = math.max(live_ms, tonumber(ARGV[3]))
local most = tonumber(ARGV[4])
local stamp = string.format('%.0f', now)

local reply = { now }
for k = 1, #KEYS do
  local key, own = KEYS[k], ARGV[4 + k]
  redis.call('HSET', key, own, stamp)
  -- Instances deciding a variant with the same parameters share one field: alone in its hash, nothing to read.
  if redis.call('HLEN', key) == 1 then
    reply[#reply + 1] = 0
  else
    local fields = redis.call('HGETALL', key)
    local live, stale = {}, {}
    for f = 1, #fields, 2 do
      local at = tonumber(fields[f + 1])
      if at == nil or now - at >= live_ms or at - now > live_ms then
        stale[#stale + 1] = fields[f]
      elseif fields[f] ~= own then
        live[#live + 1] = { fields[f], at }
      end
    end
    for s = 1, #stale, 1000 do
      redis.call('HDEL', key, unpack(stale, s, math.min(s + 999, #stale)))
    end
    table.sort(live, function(a, b) return a[2] > b[2] end)
    local count = math.min(#live, most)
    reply[#reply + 1] = count
    for l = 1, count do
      reply[#reply + 1] = live[l][1]
    end
  end
  redis.call('PEXPIRE', key, ttl)
end
return reply
