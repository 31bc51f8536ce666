-- wrk script for benchmarks/peers.sh, scenario "many": every request comes from another client, as the load
-- balancer in front would say it in X-Forwarded-For, cycling through 10,000 addresses (10.0.0.0 to 10.0.39.15).
-- The requests are formatted once, in init(), so that choosing one costs wrk next to nothing.
local requests = {}
local count = 10000
local next_index = 0

function init(args)
  for n = 0, count - 1 do
    local address = string.format("10.%d.%d.%d", math.floor(n / 65536) % 256, math.floor(n / 256) % 256, n % 256)
    local headers = {}
    for name, value in pairs(wrk.headers) do headers[name] = value end
    headers["X-Forwarded-For"] = address
    requests[n + 1] = wrk.format(nil, nil, headers)
  end
end

function request()
  next_index = next_index % count + 1
  return requests[next_index]
end
