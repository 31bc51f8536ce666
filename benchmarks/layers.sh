#!/usr/bin/env bash
# The sample's layered GET /api/v1/search (filter 'edge' + shared 'account' before dispatch, 'search-per-ip' +
# 'search-per-key' on the method) against GET /api/v1/unlimited (no limit, no filter), over HTTP at 16 connections
# on 127.0.0.1, on the in-memory store and on a local redis-server it spawns; and, on Redis, the script calls per
# search from INFO commandstats. Every limit is raised so that nothing is rejected: what is measured is the cost of
# deciding. 3 interleaved rounds of 10 s per endpoint and store, after a warm-up. About 4 minutes. Stops what it
# started on exit.
#
#   benchmarks/layers.sh
set -euo pipefail
cd "$(dirname "$0")/.."
command -v wrk > /dev/null || { echo "wrk is not installed: sudo apt-get install wrk" >&2; exit 1; }
SECONDS_PER_RUN=${SECONDS_PER_RUN:-10}
ROUNDS=${ROUNDS:-3}
mvn -B -q -pl sample-app -am -DskipTests package
SAMPLE_JAR=$(ls sample-app/target/sample-app-*.jar | grep -v original | head -1)
REDIS_PORT=$((30000 + RANDOM % 5000))
PIDS=()
trap 'for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done' EXIT
UNLIMITED=1000000000
LIMITS=(--ratelimit.filters.edge.paths=/api/v1/search
  --ratelimit.filters.edge.limit=$UNLIMITED --ratelimit.filters.edge.burst=$UNLIMITED
  --ratelimit.policies.account.limit=$UNLIMITED --ratelimit.policies.account.burst=$UNLIMITED
  --ratelimit.policies.search-per-ip.limit=$UNLIMITED
  --ratelimit.policies.search-per-key.limit=$UNLIMITED --ratelimit.policies.search-per-key.window=1s)

start_app() {
  local port=$1; shift
  java -jar "$SAMPLE_JAR" --server.port="$port" --logging.level.root=WARN "${LIMITS[@]}" "$@" \
    > "/tmp/layers-app-$port.log" 2>&1 &
  PIDS+=($!)
  for _ in $(seq 1 240); do
    curl -fs "http://127.0.0.1:$port/actuator/health" > /dev/null 2>&1 && return 0
    sleep 0.5
  done
  echo "the sample app did not start; see /tmp/layers-app-$port.log" >&2
  exit 1
}

# load <port> <path> <seconds>: wrk at 16 connections; prints requests/s and the responses that were not 2xx.
load() {
  wrk -t1 -c16 -d"$3s" "http://127.0.0.1:$1$2" \
    | awk '/Requests\/sec/ { rps = $2 } /Non-2xx/ { other = $NF } END { printf "requests/s=%s non2xx=%d\n", rps, other }'
}

script_calls() {
  redis-cli -p "$REDIS_PORT" INFO commandstats | tr -d '\r' \
    | awk -F'[=,:]' '/^cmdstat_(evalsha|eval):/ { sum += $3 } END { print sum + 0 }'
}

measure() {
  local store=$1 port=$2
  for _ in 1 2; do
    load "$port" /api/v1/unlimited 10 > /dev/null
    load "$port" "/api/v1/search?q=x" 10 > /dev/null
  done
  for round in $(seq 1 "$ROUNDS"); do
    echo "$store round $round unlimited $(load "$port" /api/v1/unlimited "$SECONDS_PER_RUN")"
    if [ "$store" = redis ]; then
      before=$(script_calls)
      result=$(load "$port" "/api/v1/search?q=x" "$SECONDS_PER_RUN")
      after=$(script_calls)
      echo "$store round $round search    $result scripts=$((after - before))"
    else
      echo "$store round $round search    $(load "$port" "/api/v1/search?q=x" "$SECONDS_PER_RUN")"
    fi
  done
}

MEMORY_PORT=$((20000 + RANDOM % 5000))
start_app "$MEMORY_PORT"
measure memory "$MEMORY_PORT"
kill "${PIDS[-1]}"

redis-server --port "$REDIS_PORT" --save '' --appendonly no --daemonize no > /tmp/layers-redis.log 2>&1 &
PIDS+=($!)
for _ in $(seq 1 50); do redis-cli -p "$REDIS_PORT" ping > /dev/null 2>&1 && break; sleep 0.1; done
REDIS_APP_PORT=$((25000 + RANDOM % 5000))
start_app "$REDIS_APP_PORT" --spring.profiles.active=redis --spring.data.redis.port="$REDIS_PORT"
measure redis "$REDIS_APP_PORT"
