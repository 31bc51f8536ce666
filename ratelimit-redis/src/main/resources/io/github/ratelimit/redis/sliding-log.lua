-- Sliding log; mirrors SlidingLog.java.
-- KEYS[2i - 1] list of admissions, oldest first, two elements each: time (ms), cost. Admissions in the same
--              millisecond share one entry, so the list holds at most min(limit, window_ms) entries.
-- KEYS[2i]     summary of the list (sum, oldest, newest, newest_cost, expires), so that most calls never read it.
-- An entry counts while now - window < time. Entries that left the window are trimmed whenever there are any. Both
-- keys must live until the newest entry leaves the window; their expiry is pushed a whole window further when it
-- falls short, so a busy key is not re-expired on every request.

-- When would freeing the oldest entries make room for `needed` more units?
local function time_freeing(log, needed, t)
  local index = 0
  while true do
    local chunk = redis.call('LRANGE', log, index, index + 63)
    if #chunk == 0 then
      return window -- only if the summary disagrees with the log, which the writes below never leave behind
    end
    for j = 1, #chunk, 2 do
      needed = needed - tonumber(chunk[j + 1])
      if needed <= 0 then
        return tonumber(chunk[j]) + window - t
      end
    end
    index = index + #chunk
  end
end

-- Merge the oldest entries whose total is at most `surplus` (the units above the limit) into one, at the newest one's
-- time. They must all leave before anything passes, so the merge changes no decision of this limit; a log a larger
-- limit left behind (before a change, or another instance's during one) is read once and is back within this
-- limit's bound. Returns the merged entry's time, or nil if there was nothing to merge.
local function merge_surplus(log, surplus)
  local merged, total, last, index = 0, 0, nil, 0
  while true do
    local chunk = redis.call('LRANGE', log, index, index + 63)
    for j = 1, #chunk, 2 do
      local cost = tonumber(chunk[j + 1])
      if total + cost > surplus then
        chunk = nil
        break
      end
      merged, total, last = merged + 1, total + cost, tonumber(chunk[j])
    end
    if chunk == nil or #chunk == 0 then
      break
    end
    index = index + #chunk
  end
  if merged < 2 then
    return nil
  end
  redis.call('LTRIM', log, 2 * merged, -1)
  redis.call('LPUSH', log, total, last)
  return last
end

for i = 1, #ARGV - 7 do
  local log, summary, cost = KEYS[2 * i - 1], KEYS[2 * i], tonumber(ARGV[7 + i])
  local sum, oldest, newest, newest_cost, expires = 0, nil, nil, 0, 0
  local state = redis.call('GET', summary)
  if state and #state == 40 then
    sum, oldest, newest, newest_cost, expires = struct.unpack('ddddd', state)
  else
    redis.call('DEL', log) -- a log without its summary (evicted, or another version's) is not to be trusted
  end
  local t = now
  if newest and t < newest then
    t = newest
  end

  -- Trim the entries that left the window, scanning the head in chunks (or none when every entry left).
  local changed = false
  if newest and newest <= t - window then
    redis.call('DEL', log, summary)
    sum, oldest, newest, newest_cost, expires = 0, nil, nil, 0, 0
  elseif oldest and oldest <= t - window then
    local expired, first_kept = 0, nil
    while first_kept == nil do
      local chunk = redis.call('LRANGE', log, expired, expired + 63)
      if #chunk == 0 then
        break
      end
      for j = 1, #chunk, 2 do
        local time = tonumber(chunk[j])
        if time <= t - window then
          expired = expired + 2
          sum = sum - tonumber(chunk[j + 1])
        else
          first_kept = time
          break
        end
      end
    end
    if first_kept == nil then
      redis.call('DEL', log, summary)
      sum, oldest, newest, newest_cost, expires = 0, nil, nil, 0, 0
    else
      redis.call('LTRIM', log, expired, -1)
      oldest = first_kept
      changed = true
    end
  end

  if cost <= limit and sum + cost <= limit then
    local appended = true
    if newest == t then
      newest_cost = newest_cost + cost
      appended = redis.pcall('LSET', log, -1, newest_cost)['err'] ~= nil -- the log was lost: start it again
    end
    if appended then
      if redis.call('RPUSH', log, t, cost) == 2 and sum > 0 then
        -- The summary outlived its log (evicted under maxmemory): only this admission is known any more.
        sum, oldest, expires = 0, t, 0
      end
      newest, newest_cost = t, cost
      oldest = oldest or t
    end
    sum = sum + cost
    if t + window <= expires then
      redis.call('SET', summary, struct.pack('ddddd', sum, oldest, newest, newest_cost, expires), 'KEEPTTL')
    else
      expires = t + 2 * window
      redis.call('SET', summary, struct.pack('ddddd', sum, oldest, newest, newest_cost, expires), 'PX',
        math.max(expires - now, least_ttl))
      redis.call('PEXPIRE', log, math.max(expires - now, least_ttl))
    end
    result[n + 1], result[n + 2], result[n + 3], result[n + 4], result[n + 5] = 1, limit - sum,
      newest + window - t, 0, oldest + window - t
  else
    local reset = 0
    if newest then
      reset = newest + window - t
      if sum > limit then
        local merged = merge_surplus(log, sum - limit)
        if merged then
          oldest, changed = merged, true
        end
      end
      if changed then
        redis.call('SET', summary, struct.pack('ddddd', sum, oldest, newest, newest_cost, expires), 'KEEPTTL')
      end
    end
    local retry = -1
    if cost <= limit then
      retry = time_freeing(log, sum + cost - limit, t)
    end
    local next_unit = window
    if oldest then
      next_unit = oldest + window - t
    end
    result[n + 1], result[n + 2], result[n + 3], result[n + 4], result[n + 5] = 0, limit - sum, reset, retry,
      next_unit
  end
  n = n + 5
end
return result
