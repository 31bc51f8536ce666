-- Sliding window counter; mirrors SlidingCounter.java.
-- State (current, previous, last): the units of the window of the last admission and of the window before it, and
-- the time of the last admission. The key expires at the end of the window after that of the last admission.
local key, t, start, elapsed, current, previous, same_window, dirty

local function flush()
  if same_window then
    redis.call('SET', key, struct.pack('ddd', current, previous, t), 'KEEPTTL')
  else
    redis.call('SET', key, struct.pack('ddd', current, previous, t), 'PX',
      math.max(start + 2 * window - now, least_ttl))
  end
end

for i = 1, #ARGV - 7 do
  if KEYS[i] ~= key then
    if dirty then
      flush()
    end
    key, t, current, previous, same_window, dirty = KEYS[i], now, 0, 0, false, false
    local state = redis.call('GET', key)
    if state and #state == 24 then
      local stored_current, stored_previous, last = struct.unpack('ddd', state)
      if t < last then
        t = last
      end
      local stored_start = last - last % window
      if stored_start == t - t % window then
        current, previous, same_window = stored_current, stored_previous, true
      elseif stored_start == t - t % window - window then
        previous = stored_current
      end
    end
    start = t - t % window
    elapsed = t - start
  end
  local cost = tonumber(ARGV[7 + i])
  local budget = limit * window - previous * (window - elapsed)
  local allowed, reset, retry = 0, 0, 0
  if cost <= limit and (current + cost) * window <= budget then
    current, dirty = current + cost, true
    allowed, reset = 1, start + 2 * window - t
  else
    if current > 0 then
      reset = start + 2 * window - t
    elseif previous > 0 then
      reset = window - elapsed
    end
    if cost > limit then
      retry = -1
    elseif current + cost <= limit then
      retry = window - math.floor((limit - current - cost) * window / previous) - elapsed
    else
      retry = window - elapsed + math.max(0, window - math.floor((limit - cost) * window / current))
    end
  end
  local remaining = math.floor(budget / window) - current
  local next_unit
  if previous > 0 and current + remaining + 1 <= limit then
    next_unit = window - math.floor((limit - current - remaining - 1) * window / previous) - elapsed
  else
    next_unit = window - elapsed + window - math.floor((limit - 1) * window / limit)
  end
  result[n + 1], result[n + 2], result[n + 3], result[n + 4], result[n + 5] = allowed, remaining, reset, retry,
    next_unit
  n = n + 5
end
if dirty then
  flush()
end
return result
