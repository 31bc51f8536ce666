-- Fixed window aligned to the epoch; mirrors FixedWindow.java.
-- State: a hash per key, one field per window, named by the window's start in ms and holding the units counted in
-- it. Writing a new window's field removes the others and sets the expiry to the end of that window, so a key holds
-- one field, but for an instant at a window's edge (or longer when tests keep keys for an hour).
--
-- A request alone in its run of the key (most requests on many keys) costs one command when the window already has
-- a field: HINCRBY, undone by a second one if that went over the limit. The first request of a window also sets the
-- expiry, with PEXPIRE ... NX, whose answer says whether the key existed before: if it did, it holds a later window
-- (a failover brought a slower clock; time never runs backwards for a key) or an earlier one still alive (the edge,
-- or tests): the new field is removed and the request takes the general path.
-- A run of several requests on one key (a hot key), a request that can never pass, and the cases above take the
-- general path: HGETALL, every request of the run decided in order, then one HINCRBY for what was admitted, and
-- the expiry and the removal of other windows' fields when the window is new.
-- The key keeps no admission time: a request whose time is earlier than an admission of its window is decided at
-- its own time, and one in an earlier window than the key's at the start of the key's window, so its reset can only
-- come out longer than the Java store's, never shorter.
-- Needs Redis 7.0+ (PEXPIRE ... NX): an older Redis does not compile the script (its shebang), so it never leaves
-- an increment without an expiry.

local now_start = now - now % window
local now_field = string.format('%.0f', now_start)
local now_reset = now_start + window - now
local now_ttl = math.max(now_reset, least_ttl)
local last = #ARGV - 7
local i = 1
while i <= last do
  local key, cost = KEYS[i], tonumber(ARGV[7 + i])
  local general = cost > limit or (i < last and KEYS[i + 1] == key)
  if not general then
    -- The cost as sent (a decimal string), which spares Redis converting a Lua number back to text.
    local count = redis.call('HINCRBY', key, now_field, ARGV[7 + i])
    if count == cost and redis.call('PEXPIRE', key, now_ttl, 'NX') == 0 then
      -- The key existed, with another window's field: undo, and decide on the general path.
      redis.call('HDEL', key, now_field)
      general = true
    elseif count > limit then
      redis.call('HINCRBY', key, now_field, -cost)
      count = count - cost
      result[n + 1], result[n + 2], result[n + 3], result[n + 4], result[n + 5] = 0, limit - count, now_reset,
        now_reset, now_reset
      n = n + 5
      i = i + 1
    else
      result[n + 1], result[n + 2], result[n + 3], result[n + 4], result[n + 5] = 1, limit - count, now_reset, 0,
        now_reset
      n = n + 5
      i = i + 1
    end
  end
  if general then
    -- The latest window of the key, and the other fields (to remove once a later window is written).
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
      t = latest -- time never runs backwards for a key (a failover may bring a slower clock)
    end
    local start = t - t % window
    local count = 0
    if latest == start then
      count = latest_count
    end
    local reset = start + window - t
    local admitted = 0
    while true do
      local allowed, retry = 0, reset
      if cost > limit then
        retry = -1
      elseif count + cost <= limit then
        count, admitted = count + cost, admitted + cost
        allowed, retry = 1, 0
      end
      result[n + 1], result[n + 2], result[n + 3], result[n + 4], result[n + 5] = allowed, limit - count, reset,
        retry, reset
      n = n + 5
      i = i + 1
      if i > last or KEYS[i] ~= key then
        break
      end
      cost = tonumber(ARGV[7 + i])
    end
    if admitted > 0 then
      local start_field = string.format('%.0f', start)
      redis.call('HINCRBY', key, start_field, admitted)
      if latest ~= start then
        -- A new window: expiries count from Redis's own now, so that a key whose time ran ahead of a slower clock
        -- never expires before its window ends; the fields of other windows go.
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
    end
  end
end
return result
