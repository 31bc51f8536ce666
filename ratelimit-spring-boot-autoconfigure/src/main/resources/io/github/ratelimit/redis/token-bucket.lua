-- Token bucket with continuous refill, in exact integer units; mirrors TokenBucket.java.
-- KEYS[1] hash: u = units in the bucket (per_token units make a token), t = time of the last admission.
-- A missing key is a full bucket.
local capacity = burst * per_token
local state = redis.call('HMGET', KEYS[1], 'u', 't')
local units = tonumber(state[1])
if units == nil then
  units = capacity
else
  local last = tonumber(state[2])
  if now < last then
    now = last
  end
  local missing = capacity - units
  if missing > 0 then
    local elapsed = now - last
    if elapsed >= cdiv(missing, per_ms) then
      units = capacity
    else
      units = units + elapsed * per_ms
    end
  end
end
local admitted = false
for i = first_cost, #ARGV do
  local cost = tonumber(ARGV[i])
  local reset = cdiv(capacity - units, per_ms)
  if cost > burst then
    answer(0, idiv(units, per_token), reset, -1)
  elseif units < cost * per_token then
    answer(0, idiv(units, per_token), reset, cdiv(cost * per_token - units, per_ms))
  else
    units = units - cost * per_token
    admitted = true
    answer(1, idiv(units, per_token), cdiv(capacity - units, per_ms), 0)
  end
end
if admitted then
  redis.call('HSET', KEYS[1], 'u', units, 't', now)
  expire(KEYS[1], cdiv(capacity - units, per_ms))
end
result[1] = now
return result
