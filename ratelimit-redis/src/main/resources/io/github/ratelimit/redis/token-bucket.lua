-- Token bucket with continuous refill, in exact integer units; mirrors TokenBucket.java. It serves LEAKY_BUCKET too:
-- the same meter, seen as the level poured in (capacity - units) rather than the tokens left.
-- State (units, last, expires, counted_per_token, counted_capacity): the units in the bucket at the last admission,
-- its time, when the key expires, and how many units made a token and the bucket then. A missing key is a full
-- bucket. Under another limit or burst, what was used is kept in whole tokens (a part counts as a whole), clamped
-- to the burst, as a window keeps its count. The key must live until the bucket is full again;
-- its expiry is pushed a whole refill further when it falls short, so a busy key is not re-expired on every request.
local capacity = burst * per_token
local refill = math.ceil(capacity / per_ms)
local key, t, units, expires, dirty

local function flush()
  local full = t + math.ceil((capacity - units) / per_ms)
  if full <= expires then
    redis.call('SET', key, struct.pack('ddddd', units, t, expires, per_token, capacity), 'KEEPTTL')
  else
    expires = full + refill
    redis.call('SET', key, struct.pack('ddddd', units, t, expires, per_token, capacity), 'PX', math.max(expires - now, least_ttl))
  end
end

for i = 1, #ARGV - 7 do
  if KEYS[i] ~= key then
    if dirty then
      flush()
    end
    key, t, units, expires, dirty = KEYS[i], now, capacity, 0, false
    local state = redis.call('GET', key)
    if state and #state == 40 then
      local last, counted_per_token, counted_capacity
      units, last, expires, counted_per_token, counted_capacity = struct.unpack('ddddd', state)
      if counted_per_token ~= per_token or counted_capacity ~= capacity then
        units = math.max(0, capacity - math.ceil((counted_capacity - units) / counted_per_token) * per_token)
      end
      if t < last then
        t = last
      end
      local missing = capacity - units
      if missing > 0 then
        local elapsed = t - last
        if elapsed >= math.ceil(missing / per_ms) then
          units = capacity
        else
          units = units + elapsed * per_ms
        end
      end
    end
  end
  local cost = tonumber(ARGV[7 + i])
  local allowed, retry = 0, 0
  if cost > burst then
    retry = -1
  elseif units < cost * per_token then
    retry = math.ceil((cost * per_token - units) / per_ms)
  else
    units, dirty, allowed = units - cost * per_token, true, 1
  end
  result[n + 1], result[n + 2], result[n + 3], result[n + 4], result[n + 5] = allowed,
    math.floor(units / per_token), math.ceil((capacity - units) / per_ms), retry,
    math.ceil((per_token - units % per_token) / per_ms)
  n = n + 5
end
if dirty then
  flush()
end
return result
