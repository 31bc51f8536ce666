-- Leaky bucket as a meter, in exact integer units; mirrors LeakyBucket.java.
-- KEYS[1] hash: l = level in units (per_token units per request unit), t = time of the last admission.
-- A missing key is an empty bucket.
local capacity = burst * per_token
local state = redis.call('HMGET', KEYS[1], 'l', 't')
local level = tonumber(state[1]) or 0
local last = tonumber(state[2])
if last and now < last then
  now = last
end
if level > 0 then
  local elapsed = now - last
  if elapsed >= cdiv(level, per_ms) then
    level = 0
  else
    level = level - elapsed * per_ms
  end
end
local admitted = false
for i = first_cost, #ARGV do
  local cost = tonumber(ARGV[i])
  if cost > burst then
    answer(0, idiv(capacity - level, per_token), cdiv(level, per_ms), -1)
  elseif level + cost * per_token > capacity then
    answer(0, idiv(capacity - level, per_token), cdiv(level, per_ms),
      cdiv(level + cost * per_token - capacity, per_ms))
  else
    level = level + cost * per_token
    admitted = true
    answer(1, idiv(capacity - level, per_token), cdiv(level, per_ms), 0)
  end
end
if admitted then
  redis.call('HSET', KEYS[1], 'l', level, 't', now)
  expire(KEYS[1], cdiv(level, per_ms))
end
result[1] = now
return result
