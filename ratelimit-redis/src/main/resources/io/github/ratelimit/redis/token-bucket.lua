-- Token bucket with continuous refill, in exact integer units; mirrors TokenBucket.java. It serves LEAKY_BUCKET too:
-- the same meter, seen as the level poured in (capacity - units) rather than the tokens left.
-- State (units, last, expires, per_token, per_ms, burst): the units in the bucket (per_token units make a token) at
-- the last admission, its time, when the key expires, and the parameters the units were counted in. A missing key
-- is a full bucket. State counted under other parameters (an edited policy, or a rolling deploy where old and new
-- instances alternate) is brought to now under its own parameters and converted: the tokens it lacked are lacking
-- from the new bucket too (rounded up, and possibly more than it holds: the bucket is then in debt until refill pays
-- it off), so no version's admissions are forgotten by the other. The key must live until the bucket is full again;
-- its expiry is pushed a whole refill further when it falls short, so a busy key is not re-expired on every request.
local capacity = burst * per_token
local refill = math.ceil(capacity / per_ms)
local key, t, units, expires, dirty

local function flush()
  local full = t + math.ceil((capacity - units) / per_ms)
  if full <= expires then
    redis.call('SET', key, struct.pack('dddddd', units, t, expires, per_token, per_ms, burst), 'KEEPTTL')
  else
    expires = full + refill
    redis.call('SET', key, struct.pack('dddddd', units, t, expires, per_token, per_ms, burst), 'PX',
      math.max(expires - now, least_ttl))
  end
end

for i = 1, #ARGV - 7 do
  if KEYS[i] ~= key then
    if dirty then
      flush()
    end
    key, t, units, expires, dirty = KEYS[i], now, capacity, 0, false
    local state = redis.call('GET', key)
    if state and #state == 48 then
      local last, was_per_token, was_per_ms, was_burst
      units, last, expires, was_per_token, was_per_ms, was_burst = struct.unpack('dddddd', state)
      if t < last then
        t = last
      end
      local was_capacity = was_burst * was_per_token
      local missing = was_capacity - units
      if missing > 0 then
        local elapsed = t - last
        if elapsed >= math.ceil(missing / was_per_ms) then
          missing = 0
        else
          missing = missing - elapsed * was_per_ms
        end
      end
      if was_per_token ~= per_token or was_per_ms ~= per_ms or was_burst ~= burst then
        -- Not capped at this bucket's capacity: a debt that refill pays off, so that converting back and forth
        -- forgets nothing.
        missing = math.ceil(missing * per_token / was_per_token)
        dirty = missing > 0 -- written back in this policy's units, even if nothing is admitted
      end
      units = capacity - missing
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
  result[n + 1], result[n + 2], result[n + 3], result[n + 4] = allowed, math.floor(units / per_token),
    math.ceil((capacity - units) / per_ms), retry
  n = n + 4
end
if dirty then
  flush()
end
return result
