-- Fixed window aligned to the epoch; mirrors FixedWindow.java.
-- KEYS[1] hash: s = window start, c = units counted in it, t = time of the last admission
local state = redis.call('HMGET', KEYS[1], 's', 'c', 't')
local last = tonumber(state[3])
if last and now < last then
  now = last -- time never runs backwards for a key (a failover may bring a slower clock)
end
local start = idiv(now, window) * window
local count = 0
if tonumber(state[1]) == start then
  count = tonumber(state[2])
end
local reset = start + window - now
local admitted = false
for i = first_cost, #ARGV do
  local cost = tonumber(ARGV[i])
  if cost > limit then
    answer(0, limit - count, reset, -1)
  elseif count + cost > limit then
    answer(0, limit - count, reset, reset)
  else
    count = count + cost
    admitted = true
    answer(1, limit - count, reset, 0)
  end
end
if admitted then
  redis.call('HSET', KEYS[1], 's', start, 'c', count, 't', now)
  expire(KEYS[1], reset)
end
result[1] = now
return result
