-- Sliding window counter; mirrors SlidingCounter.java.
-- KEYS[1] hash: s = current window start, c = its units, p = the previous window's units, t = last admission
local state = redis.call('HMGET', KEYS[1], 's', 'c', 'p', 't')
local last = tonumber(state[4])
if last and now < last then
  now = last
end
local start = idiv(now, window) * window
local elapsed = now - start
local current, previous = 0, 0
local stored_start = tonumber(state[1])
if stored_start == start then
  current = tonumber(state[2])
  previous = tonumber(state[3])
elseif stored_start == start - window then
  previous = tonumber(state[2])
end
local budget = limit * window - previous * (window - elapsed)

local function reset()
  if current > 0 then
    return start + 2 * window - now
  elseif previous > 0 then
    return window - elapsed
  end
  return 0
end

local admitted = false
for i = first_cost, #ARGV do
  local cost = tonumber(ARGV[i])
  if cost <= limit and (current + cost) * window <= budget then
    current = current + cost
    admitted = true
    answer(1, idiv(budget, window) - current, reset(), 0)
  else
    local retry
    if cost > limit then
      retry = -1
    elseif current + cost <= limit then
      retry = window - idiv((limit - current - cost) * window, previous) - elapsed
    else
      retry = window - elapsed + math.max(0, window - idiv((limit - cost) * window, current))
    end
    answer(0, idiv(budget, window) - current, reset(), retry)
  end
end
if admitted then
  redis.call('HSET', KEYS[1], 's', start, 'c', current, 'p', previous, 't', now)
  expire(KEYS[1], start + 2 * window - now)
end
result[1] = now
return result
