-- Fixed window aligned to the epoch; mirrors FixedWindow.java.
-- State (count, last): the units counted in the window of the last admission, and its time. The window of a state
-- is the one holding its last admission; the key expires at the end of that window.
local key, t, start, count, same_window, dirty

local function flush()
  if same_window then
    redis.call('SET', key, struct.pack('dd', count, t), 'KEEPTTL')
  else
    redis.call('SET', key, struct.pack('dd', count, t), 'PX', math.max(start + window - now, least_ttl))
  end
end

for i = 1, #ARGV - 7 do
  if KEYS[i] ~= key then
    if dirty then
      flush()
    end
    key, t, count, same_window, dirty = KEYS[i], now, 0, false, false
    local state = redis.call('GET', key)
    if state and #state == 16 then
      local last
      count, last = struct.unpack('dd', state)
      if t < last then
        t = last -- time never runs backwards for a key (a failover may bring a slower clock)
      end
      same_window = last - last % window == t - t % window
    end
    start = t - t % window
    if not same_window then
      count = 0
    end
  end
  local cost = tonumber(ARGV[7 + i])
  local reset = start + window - t
  local allowed, retry = 0, reset
  if cost > limit then
    retry = -1
  elseif count + cost <= limit then
    count, dirty = count + cost, true
    allowed, retry = 1, 0
  end
  result[n + 1], result[n + 2], result[n + 3], result[n + 4] = allowed, limit - count, reset, retry
  n = n + 4
end
if dirty then
  flush()
end
return result
