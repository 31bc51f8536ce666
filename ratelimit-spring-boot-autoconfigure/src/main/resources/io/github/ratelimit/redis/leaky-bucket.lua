-- Leaky bucket as a meter, in exact integer units; mirrors LeakyBucket.java.
-- State (level, last, expires): the level in units (per_token units per request unit) at the last admission, its
-- time, and when the key expires. A missing key is an empty bucket. The key must live until the bucket is empty;
-- its expiry is pushed a whole drain further when it falls short, so a busy key is not re-expired on every request.
local capacity = burst * per_token
local drain = math.ceil(capacity / per_ms)
local key, t, level, expires, dirty

local function flush()
  local empty = t + math.ceil(level / per_ms)
  if empty <= expires then
    redis.call('SET', key, struct.pack('ddd', level, t, expires), 'KEEPTTL')
  else
    expires = empty + drain
    redis.call('SET', key, struct.pack('ddd', level, t, expires), 'PX', math.max(expires - now, least_ttl))
  end
end

for i = 1, #ARGV - 7 do
  if KEYS[i] ~= key then
    if dirty then
      flush()
    end
    key, t, level, expires, dirty = KEYS[i], now, 0, 0, false
    local state = redis.call('GET', key)
    if state and #state == 24 then
      local last
      level, last, expires = struct.unpack('ddd', state)
      if t < last then
        t = last
      end
      if level > 0 then
        local elapsed = t - last
        if elapsed >= math.ceil(level / per_ms) then
          level = 0
        else
          level = level - elapsed * per_ms
        end
      end
    end
  end
  local cost = tonumber(ARGV[7 + i])
  local allowed, retry = 0, 0
  if cost > burst then
    retry = -1
  elseif level + cost * per_token > capacity then
    retry = math.ceil((level + cost * per_token - capacity) / per_ms)
  else
    level, dirty, allowed = level + cost * per_token, true, 1
  end
  result[n + 1], result[n + 2], result[n + 3], result[n + 4] = allowed, math.floor((capacity - level) / per_token),
    math.ceil(level / per_ms), retry
  n = n + 4
end
if dirty then
  flush()
end
return result
