-- Sliding log; mirrors SlidingLog.java.
-- KEYS[1] list of admissions, oldest first, two elements each: time (ms), cost. Admissions in the same
--         millisecond share one entry, so the list holds at most min(limit, window_ms) entries.
-- KEYS[2] string: the sum of the costs in KEYS[1].
-- An entry counts while now - window < time. Expired entries are trimmed on every call.
local log, total = KEYS[1], KEYS[2]
local sum = tonumber(redis.call('GET', total)) or 0
local length = redis.call('LLEN', log)
local newest
if length > 0 then
  newest = tonumber(redis.call('LINDEX', log, -2))
  if now < newest then
    now = newest
  end
end

-- Trim the entries that left the window, scanning the head in chunks.
local expired, expired_sum = 0, 0
while expired < length do
  local chunk = redis.call('LRANGE', log, expired, expired + 63)
  local stop = (#chunk == 0)
  for j = 1, #chunk, 2 do
    if tonumber(chunk[j]) <= now - window then
      expired = expired + 2
      expired_sum = expired_sum + tonumber(chunk[j + 1])
    else
      stop = true
      break
    end
  end
  if stop then
    break
  end
end
if expired > 0 then
  length = length - expired
  sum = sum - expired_sum
  if length == 0 then
    redis.call('DEL', log, total)
  else
    redis.call('LTRIM', log, expired, -1)
    redis.call('INCRBY', total, -expired_sum) -- keeps the TTL
  end
end

-- When would freeing the oldest entries make room for `needed` more units?
local function time_freeing(needed)
  local index = 0
  while true do
    local chunk = redis.call('LRANGE', log, index, index + 63)
    if #chunk == 0 then
      return window -- only if the sum disagrees with the log, which the writes above never leave behind
    end
    for j = 1, #chunk, 2 do
      needed = needed - tonumber(chunk[j + 1])
      if needed <= 0 then
        return tonumber(chunk[j]) + window - now
      end
    end
    index = index + #chunk
  end
end

local admitted = false
for i = first_cost, #ARGV do
  local cost = tonumber(ARGV[i])
  if cost <= limit and sum + cost <= limit then
    if length > 0 and newest == now then
      redis.call('LSET', log, -1, tonumber(redis.call('LINDEX', log, -1)) + cost)
    else
      redis.call('RPUSH', log, now, cost)
      length = length + 2
      newest = now
    end
    sum = sum + cost
    admitted = true
    answer(1, limit - sum, newest + window - now, 0)
  else
    local reset = 0
    if length > 0 then
      reset = newest + window - now
    end
    if cost > limit then
      answer(0, limit - sum, reset, -1)
    else
      answer(0, limit - sum, reset, time_freeing(sum + cost - limit))
    end
  end
end
if admitted then
  redis.call('SET', total, sum)
  expire(log, window)
  expire(total, window)
end
result[1] = now
return result
