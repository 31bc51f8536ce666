-- Shared by every rate limit script; the algorithm's script is appended to it.
--
-- ARGV[1] now in ms since the epoch, or "" to use Redis TIME (production; tests drive time explicitly)
-- ARGV[2] limit   ARGV[3] window_ms   ARGV[4] burst
-- ARGV[5] units_per_token   ARGV[6] units_per_ms   (the rate limit/window as exact integers)
-- ARGV[7] least TTL in ms (0 in production: keys expire as soon as their state is back to fresh)
-- ARGV[8..] the cost of each request of the batch, decided one after the other at the same instant
--
-- Returns { now_ms, then for each request: allowed (1|0), remaining, reset_after_ms, retry_after_ms (-1: never) }.
--
-- Lua numbers are doubles: every value here is an integer below 2^53 (the policy checks it), where doubles are
-- exact. Division is the only operation that rounds, so it is done by idiv, which corrects the rounded quotient.
if redis.replicate_commands then
  redis.replicate_commands() -- for Redis < 5, where TIME would forbid later writes; a no-op since 7.0
end

local function idiv(a, b) -- floor(a / b) for 0 <= a, 0 < b
  local q = math.floor(a / b)
  if q * b > a then
    q = q - 1
  elseif (q + 1) * b <= a then
    q = q + 1
  end
  return q
end

local function cdiv(a, b) -- ceil(a / b) for 0 <= a, 0 < b
  return idiv(a + b - 1, b)
end

local now
if ARGV[1] ~= '' then
  now = tonumber(ARGV[1])
else
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end
local limit = tonumber(ARGV[2])
local window = tonumber(ARGV[3])
local burst = tonumber(ARGV[4])
local per_token = tonumber(ARGV[5])
local per_ms = tonumber(ARGV[6])
local least_ttl = tonumber(ARGV[7])
local first_cost = 8

local result = { 0 }
local function answer(allowed, remaining, reset, retry)
  result[#result + 1] = allowed
  result[#result + 1] = remaining
  result[#result + 1] = reset
  result[#result + 1] = retry
end

local function expire(key, ttl)
  redis.call('PEXPIRE', key, math.max(ttl, least_ttl, 1))
end

