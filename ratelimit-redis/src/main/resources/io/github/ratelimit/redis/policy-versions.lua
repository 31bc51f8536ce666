#!lua
-- Which parameter sets a policy is being decided with, by the instances sharing this Redis: one hash per policy
-- name, a field per parameter set and variant ('<algorithm>:<limit>:<window_ms>:<burst>|<variant>'), valued with
-- the last time an instance deciding with it said so. An instance says so before its first decision and then at
-- least every second while it decides, so that every instance learns of another configuration of the same policy
-- (a rolling deploy) and, while both live, admits only what both admit.
--
-- KEYS[1] the policy's hash
-- ARGV[1] now in ms since the epoch, or "" to use Redis TIME (production; tests drive time explicitly)
-- ARGV[2] the calling instance's field
-- ARGV[3] how long a field stays live after it was last set, in ms
-- ARGV[4] least TTL of the hash in ms (0 in production)
-- ARGV[5] the most other fields to return
--
-- Returns now, then the other live fields, the most recently set first and at most ARGV[5] of them. Fields past
-- their life are deleted, so the hash holds the sets in use; so is a field set later than now plus its life, which
-- no instance on this Redis's clock wrote, so that a stray writer cannot keep a set alive for ever.

local now
if ARGV[1] ~= '' then
  now = tonumber(ARGV[1])
else
  local time = redis.call('TIME')
  now = time[1] * 1000 + math.floor(time[2] / 1000)
end
local live_ms = tonumber(ARGV[3])

redis.call('HSET', KEYS[1], ARGV[2], string.format('%.0f', now))
local fields = redis.call('HGETALL', KEYS[1])
local live, stale = {}, {}
for f = 1, #fields, 2 do
  local at = tonumber(fields[f + 1])
  if at == nil or now - at >= live_ms or at - now > live_ms then
    stale[#stale + 1] = fields[f]
  elseif fields[f] ~= ARGV[2] then
    live[#live + 1] = { fields[f], at }
  end
end
for s = 1, #stale, 1000 do
  redis.call('HDEL', KEYS[1], unpack(stale, s, math.min(s + 999, #stale)))
end
table.sort(live, function(a, b) return a[2] > b[2] end)
local others = { now }
for l = 1, math.min(#live, tonumber(ARGV[5])) do
  others[#others + 1] = live[l][1]
end
redis.call('PEXPIRE', KEYS[1], math.max(live_ms, tonumber(ARGV[4])))
return others
