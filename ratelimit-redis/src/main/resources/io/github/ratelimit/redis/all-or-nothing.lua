#!lua
-- Groups of entries of any policies in one call: each group is one request's decision of several policies, all or
-- nothing, or units given back or charged. Concurrent requests' groups are sent together (the store's batching
-- layer), and decided one after the other, in order, each atomically.
-- The per-algorithm scripts decide many requests of one policy; this one decides requests of several policies, with
-- the same state layouts and arithmetic (see prelude.lua and each algorithm's script), so either script may decide
-- for a key.
--
-- ARGV[1] now in ms since the epoch, or "" to use Redis TIME (production; tests drive time explicitly)
-- ARGV[2] least TTL in ms (0 in production)
-- then per group: 'take', 'refund' or 'charge'; the number of its entries; and 8 arguments per entry: algorithm
-- ('f' fixed window, 'l' sliding log, 'h' a concurrency limit's log of slots held, 'c' sliding counter,
-- 'b' bucket), limit, window_ms, burst, units_per_token,
-- units_per_ms, cost, and for 'refund' and 'charge' the time the entry was counted at; for 'take' the time to count
-- it at when it is not 0: a calendar window's window time, which Redis's TIME cannot know.
-- KEYS: one per entry, in order, group after group; two for the sliding log (the log and its summary).
--
-- Returns, per group, 0 then its answers, or the error that stopped the group (what it wrote before stays written,
-- as for any script that fails; the other groups are decided as if it were alone).
-- 'take' answers, per entry: allowed (1|0), remaining, reset_after_ms, retry_after_ms (-1: never), next_unit_ms
-- (until more than remaining units are available), and the time it was counted at. If any entry of the group is
-- rejected, what the group's others took is given back before the group ends (a script is atomic: no other command
-- sees it), and they report what they would have left.
-- 'refund' gives back each entry's cost to the window it was counted in, if that still holds it; answers nothing.
-- 'charge' takes each entry's cost more for the admission counted then, whatever is left (a cost known only once the
-- request was served): the key may go over its limit until its window ends or it refills; answers nothing.

local now
if ARGV[1] ~= '' then
  now = tonumber(ARGV[1])
else
  local time = redis.call('TIME')
  now = time[1] * 1000 + math.floor(time[2] / 1000)
end
local least_ttl = tonumber(ARGV[2])
local call_now = now

local function fixed_take(key, cost, limit, window)
  -- The common case first, as fixed-window.lua does: add to now's window, which is the key's latest when the key is
  -- new (the expiry is then set) or already counts in it; otherwise undo and read the key.
  if cost <= limit then
    local start = now - now % window
    local start_field = string.format('%.0f', start)
    local reset = start + window - now
    local count = redis.call('HINCRBY', key, start_field, cost)
    if count == cost and redis.call('PEXPIRE', key, math.max(reset, least_ttl), 'NX') == 0 then
      redis.call('HDEL', key, start_field) -- the key holds another window: decided below
    elseif count > limit then
      redis.call('HINCRBY', key, start_field, -cost)
      return 0, limit - count + cost, reset, reset, reset, now
    else
      return 1, limit - count, reset, 0, reset, now
    end
  end
  local fields = redis.call('HGETALL', key)
  local latest, latest_count = nil, 0
  for f = 1, #fields, 2 do
    local start = tonumber(fields[f])
    if latest == nil or start > latest then
      latest, latest_count = start, tonumber(fields[f + 1])
    end
  end
  local t = now
  if latest ~= nil and latest > t then
    t = latest -- time never runs backwards for a key
  end
  local start = t - t % window
  local count = 0
  if latest == start then
    count = latest_count
  end
  local reset = start + window - t
  if cost > limit then
    return 0, limit - count, reset, -1, reset, t
  end
  if count + cost > limit then
    return 0, limit - count, reset, reset, reset, t
  end
  local start_field = string.format('%.0f', start)
  redis.call('HINCRBY', key, start_field, cost)
  if latest ~= start then
    redis.call('PEXPIRE', key, math.max(start + window - now, least_ttl))
    local stale = {}
    for f = 1, #fields, 2 do
      if fields[f] ~= start_field then
        stale[#stale + 1] = fields[f]
      end
    end
    if #stale > 0 then
      redis.call('HDEL', key, unpack(stale))
    end
  end
  return 1, limit - count - cost, reset, 0, reset, t
end

-- Refunds and charges (see 'refund' and 'charge' above) change the admission's count by change(count), if its window
-- still holds it.
local function fixed_settle(key, window, at, change)
  local field = string.format('%.0f', at - at % window)
  local count = redis.call('HGET', key, field)
  if count then
    redis.call('HINCRBY', key, field, change(tonumber(count)))
  end
end

-- A bucket's state in the units of this configuration: what was used kept in whole tokens under another limit or burst.
local function bucket_state(key, burst, per_token)
  local state = redis.call('GET', key)
  if not (state and #state == 40) then
    return nil
  end
  local units, last, expires, counted_per_token, counted_capacity = struct.unpack('ddddd', state)
  local capacity = burst * per_token
  if counted_per_token ~= per_token or counted_capacity ~= capacity then
    units = math.max(0, capacity - math.ceil((counted_capacity - units) / counted_per_token) * per_token)
  end
  return units, last, expires, capacity
end

local function bucket_take(key, cost, burst, per_token, per_ms)
  local capacity = burst * per_token
  local t = now
  local units, last, expires = bucket_state(key, burst, per_token)
  if not units then
    units, expires = capacity, 0
  else
    if t < last then
      t = last
    end
    local missing = capacity - units
    if missing > 0 then
      if t - last >= math.ceil(missing / per_ms) then
        units = capacity
      else
        units = units + (t - last) * per_ms
      end
    end
  end
  local reset = math.ceil((capacity - units) / per_ms)
  local next_unit = math.ceil((per_token - units % per_token) / per_ms)
  if cost > burst then
    return 0, math.floor(units / per_token), reset, -1, next_unit, t
  end
  if units < cost * per_token then
    return 0, math.floor(units / per_token), reset, math.ceil((cost * per_token - units) / per_ms), next_unit, t
  end
  units = units - cost * per_token
  local full = t + math.ceil((capacity - units) / per_ms)
  if full <= expires then
    redis.call('SET', key, struct.pack('ddddd', units, t, expires, per_token, capacity), 'KEEPTTL')
  else
    expires = full + math.ceil(capacity / per_ms)
    redis.call('SET', key, struct.pack('ddddd', units, t, expires, per_token, capacity), 'PX', math.max(expires - now, least_ttl))
  end
  return 1, math.floor(units / per_token), math.ceil((capacity - units) / per_ms), 0,
    math.ceil((per_token - units % per_token) / per_ms), t
end

local function bucket_refund(key, cost, burst, per_token)
  -- Tokens given back at the last admission's time are as good as never taken; the bucket never overfills, and a
  -- fuller bucket is full sooner, so the expiry it has is long enough.
  local units, last, expires, capacity = bucket_state(key, burst, per_token)
  if units then
    units = math.min(capacity, units + cost * per_token)
    redis.call('SET', key, struct.pack('ddddd', units, last, expires, per_token, capacity), 'KEEPTTL')
  end
end

local function bucket_charge(key, cost, burst, per_token, per_ms)
  -- Below empty: the refill repays the debt, and the key lives until it is full again.
  local units, last, expires, capacity = bucket_state(key, burst, per_token)
  if units then
    units = units - cost * per_token
    local full = last + math.ceil((capacity - units) / per_ms)
    if full <= expires then
      redis.call('SET', key, struct.pack('ddddd', units, last, expires, per_token, capacity), 'KEEPTTL')
    else
      expires = full + math.ceil(capacity / per_ms)
      redis.call('SET', key, struct.pack('ddddd', units, last, expires, per_token, capacity), 'PX',
        math.max(expires - now, least_ttl))
    end
  end
end

-- When more than remaining units can have passed at the earliest; see SlidingCounter.java.
local function counter_next_unit(limit, window, elapsed, current, previous, remaining)
  if previous > 0 and current + remaining + 1 <= limit then
    return window - math.floor((limit - current - remaining - 1) * window / previous) - elapsed
  end
  return window - elapsed + window - math.floor((limit - 1) * window / limit)
end

local function counter_take(key, cost, limit, window)
  local t, current, previous, same_window = now, 0, 0, false
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
  local start = t - t % window
  local elapsed = t - start
  local budget = limit * window - previous * (window - elapsed)
  if cost <= limit and (current + cost) * window <= budget then
    current = current + cost
    if same_window then
      redis.call('SET', key, struct.pack('ddd', current, previous, t), 'KEEPTTL')
    else
      redis.call('SET', key, struct.pack('ddd', current, previous, t), 'PX',
        math.max(start + 2 * window - now, least_ttl))
    end
    local remaining = math.floor(budget / window) - current
    return 1, remaining, start + 2 * window - t, 0,
      counter_next_unit(limit, window, elapsed, current, previous, remaining), t
  end
  local reset, retry = 0, 0
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
  local remaining = math.floor(budget / window) - current
  return 0, remaining, reset, retry, counter_next_unit(limit, window, elapsed, current, previous, remaining), t
end

local function counter_settle(key, window, at, change)
  local state = redis.call('GET', key)
  if state and #state == 24 then
    local current, previous, last = struct.unpack('ddd', state)
    local stored_start, at_start = last - last % window, at - at % window
    if stored_start == at_start then
      current = current + change(current)
    elseif stored_start == at_start + window then
      previous = previous + change(previous)
    else
      return
    end
    redis.call('SET', key, struct.pack('ddd', current, previous, last), 'KEEPTTL')
  end
end

-- As in sliding-log.lua: merge the oldest entries whose total is at most the units above the limit into one.
local function log_merge_surplus(log, surplus)
  local merged, total, last, index = 0, 0, nil, 0
  while true do
    local chunk = redis.call('LRANGE', log, index, index + 63)
    for j = 1, #chunk, 2 do
      local units = tonumber(chunk[j + 1])
      if total + units > surplus then
        chunk = nil
        break
      end
      merged, total, last = merged + 1, total + units, tonumber(chunk[j])
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

local function log_take(log, summary, cost, limit, window)
  local sum, oldest, newest, newest_cost, expires = 0, nil, nil, 0, 0
  local state = redis.call('GET', summary)
  if state and #state == 40 then
    sum, oldest, newest, newest_cost, expires = struct.unpack('ddddd', state)
  else
    redis.call('DEL', log) -- a log without its summary is not to be trusted
  end
  local t = now
  if newest and t < newest then
    t = newest
  end
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
      appended = redis.pcall('LSET', log, -1, newest_cost)['err'] ~= nil
    end
    if appended then
      if redis.call('RPUSH', log, t, cost) == 2 and sum > 0 then
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
    return 1, limit - sum, newest + window - t, 0, oldest + window - t, t
  end
  local reset = 0
  if newest then
    reset = newest + window - t
    if sum > limit then
      local merged = log_merge_surplus(log, sum - limit)
      if merged then
        oldest, changed = merged, true
      end
    end
    if changed then
      redis.call('SET', summary, struct.pack('ddddd', sum, oldest, newest, newest_cost, expires), 'KEEPTTL')
    end
  end
  local next_unit = window
  if oldest then
    next_unit = oldest + window - t
  end
  if cost > limit then
    return 0, limit - sum, reset, -1, next_unit, t
  end
  local needed, index = sum + cost - limit, 0
  while true do
    local chunk = redis.call('LRANGE', log, index, index + 63)
    if #chunk == 0 then
      return 0, limit - sum, reset, window, next_unit, t
    end
    for j = 1, #chunk, 2 do
      needed = needed - tonumber(chunk[j + 1])
      if needed <= 0 then
        return 0, limit - sum, reset, tonumber(chunk[j]) + window - t, next_unit, t
      end
    end
    index = index + #chunk
  end
end

local function log_settle(log, summary, at, window, change)
  -- Of recent admissions: search from the newest entry. An admission still in the window whose own entry is gone was
  -- merged (log_merge_surplus): the first entry, at the time of the newest it merged, holds it.
  local state = redis.call('GET', summary)
  if not (state and #state == 40) then
    return
  end
  local sum, oldest, newest, newest_cost, expires = struct.unpack('ddddd', state)
  local high = redis.call('LLEN', log) - 1
  local index, time, units = nil, nil, nil
  while high > 0 and time ~= at do
    local low = math.max(0, high - 127)
    local chunk = redis.call('LRANGE', log, low, high)
    for j = #chunk - 1, 1, -2 do
      local entry = tonumber(chunk[j])
      if entry < at then
        return
      end
      index, time, units = low + j, entry, tonumber(chunk[j + 1])
      if entry == at then
        break
      end
    end
    high = low - 1
  end
  if index == nil or (time ~= at and (index ~= 1 or at <= now - window)) then
    return
  end
  local delta = change(units)
  sum = sum + delta
  if units + delta > 0 then
    redis.call('LSET', log, index, units + delta)
    if time == newest then
      newest_cost = newest_cost + delta
    end
  else
    -- All given back: the entry goes, so that the log holds only entries that hold units (a concurrency limit's
    -- slots). The only non-numbers in the list are these two marks.
    redis.call('LSET', log, index - 1, 'x')
    redis.call('LSET', log, index, 'x')
    redis.call('LREM', log, 2, 'x')
    if redis.call('LLEN', log) == 0 then
      redis.call('DEL', log, summary)
      return
    end
    if time == newest then
      local last = redis.call('LRANGE', log, -2, -1)
      newest, newest_cost = tonumber(last[1]), tonumber(last[2])
    end
    if time == oldest then
      oldest = tonumber(redis.call('LINDEX', log, 0))
    end
  end
  redis.call('SET', summary, struct.pack('ddddd', sum, oldest, newest, newest_cost, expires), 'KEEPTTL')
end

-- Give back (refund: never more than the admission's window holds) or take more (charge: whatever is left) for the
-- entry whose arguments follow ARGV[base] and whose first key is KEYS[k].
local function settle(base, k, at, charging)
  local algorithm, cost = ARGV[base + 1], tonumber(ARGV[base + 7])
  local window = tonumber(ARGV[base + 3])
  local function change(held)
    if charging then
      return cost
    end
    return -math.min(cost, held)
  end
  if algorithm == 'f' then
    fixed_settle(KEYS[k], window, at, change)
  elseif algorithm == 'b' then
    local burst, per_token = tonumber(ARGV[base + 4]), tonumber(ARGV[base + 5])
    if charging then
      bucket_charge(KEYS[k], cost, burst, per_token, tonumber(ARGV[base + 6]))
    else
      bucket_refund(KEYS[k], cost, burst, per_token)
    end
  elseif algorithm == 'c' then
    counter_settle(KEYS[k], window, at, change)
  else
    log_settle(KEYS[k], KEYS[k + 1], at, window, change)
  end
end

local function keys_of(base)
  local algorithm = ARGV[base + 1]
  if algorithm == 'l' or algorithm == 'h' then
    return 2
  end
  return 1
end

local function settle_group(base, entries, k, charging)
  for e = 1, entries do
    settle(base, k, tonumber(ARGV[base + 8]), charging)
    k = k + keys_of(base)
    base = base + 8
  end
end

local function take_group(base, entries, k, result)
  local admitted, all_allowed = {}, true
  for e = 1, entries do
    local algorithm = ARGV[base + 1]
    local limit, window, burst = tonumber(ARGV[base + 2]), tonumber(ARGV[base + 3]), tonumber(ARGV[base + 4])
    local per_token, per_ms, cost = tonumber(ARGV[base + 5]), tonumber(ARGV[base + 6]), tonumber(ARGV[base + 7])
    local at = tonumber(ARGV[base + 8])
    if at > 0 then
      now = at
    else
      now = call_now
    end
    local allowed, remaining, reset, retry, next_unit, t
    if algorithm == 'f' then
      allowed, remaining, reset, retry, next_unit, t = fixed_take(KEYS[k], cost, limit, window)
    elseif algorithm == 'b' then
      allowed, remaining, reset, retry, next_unit, t = bucket_take(KEYS[k], cost, burst, per_token, per_ms)
    elseif algorithm == 'c' then
      allowed, remaining, reset, retry, next_unit, t = counter_take(KEYS[k], cost, limit, window)
    else
      allowed, remaining, reset, retry, next_unit, t = log_take(KEYS[k], KEYS[k + 1], cost, limit, window)
    end
    local n = #result
    result[n + 1], result[n + 2], result[n + 3], result[n + 4], result[n + 5], result[n + 6] = allowed, remaining,
      reset, retry, next_unit, t
    if allowed == 1 then
      admitted[#admitted + 1] = { base, k, t, n + 2, cost }
    else
      all_allowed = false
    end
    k = k + keys_of(base)
    base = base + 8
  end
  now = call_now
  if not all_allowed then
    for a = 1, #admitted do
      local entry = admitted[a]
      settle(entry[1], entry[2], entry[3], false)
      result[entry[4]] = result[entry[4]] + entry[5]
    end
  end
end

local result, a, k = {}, 3, 1
while a <= #ARGV do
  local mode, entries = ARGV[a], tonumber(ARGV[a + 1])
  local base = a + 1
  local status = #result + 1
  result[status] = 0
  now = call_now -- a take group that failed may have left a calendar entry's time
  local ok, err
  if mode == 'take' then
    ok, err = pcall(take_group, base, entries, k, result)
  else
    ok, err = pcall(settle_group, base, entries, k, mode == 'charge')
  end
  if not ok then
    for i = #result, status + 1, -1 do
      result[i] = nil
    end
    if type(err) == 'table' and err['err'] then
      err = err['err']
    end
    result[status] = tostring(err)
  end
  for e = 1, entries do
    k = k + keys_of(base)
    base = base + 8
  end
  a = base + 1
end
return result
