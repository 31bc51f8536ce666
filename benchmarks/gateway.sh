#!/usr/bin/env bash
# Spring Cloud Gateway: what a route's limit costs the gateway, in memory and on Redis, against an unlimited route and
# against the gateway's own RedisRateLimiter on the same Redis, side by side in one run; then how many requests each
# limiter admits over a limit of 10 when two gateways share the Redis (ours with ratelimit.redis.timeout=5s, so that
# no decision of the burst goes to the failure mode; EXACTNESS_TIMEOUT sets another).
#
# sample-gateway runs with the routes of benchmarks/gateway-routes.yml in front of StubUpstream (the JDK's HTTP
# server), on the last CPU (taskset, as in overhead-common.sh); the load generator, the upstream and redis-server
# share the others. Each comparison is HttpOverhead's: pairs of one-second phases, 16 connections, the order
# alternating, the gateway's CPU per request and the throughput of each route, median with its 95% confidence
# interval. About 15 minutes with the default PHASE_PAIRS=100. Needs redis-server; starts its own on a free port and
# stops everything on exit.
#
#   benchmarks/gateway.sh
#   PHASE_PAIRS=40 benchmarks/gateway.sh                                   # quicker, wider intervals
#   EXACTNESS_ONLY=1 EXACTNESS_TIMEOUT=200ms benchmarks/gateway.sh         # exactness only, the sample's timeout
set -euo pipefail
cd "$(dirname "$0")/.."
# A jar left from another build keeps its libraries when nothing of the module changed: build it afresh.
rm -f sample-gateway/target/*.jar
mvn -B -q -pl benchmarks,sample-gateway -am -DskipTests package
echo # ends the line Maven leaves open
. benchmarks/overhead-common.sh
PHASE_PAIRS=${PHASE_PAIRS:-100}
REDIS_PORT=$((30000 + RANDOM % 10000))
UPSTREAM_PORT=$((40000 + RANDOM % 10000))
SECOND_PORT=$((PORT + 1))
JAR=$(ls sample-gateway/target/sample-gateway-*.jar | grep -v original | head -1)
PIDS=()
trap 'kill "${PIDS[@]}" 2>/dev/null || true' EXIT
"${LOAD_PIN[@]}" redis-server --port "$REDIS_PORT" --save '' --appendonly no > /tmp/gateway-bench-redis.log 2>&1 &
PIDS+=($!)
"${LOAD_PIN[@]}" java -cp "$BENCH_JAR" io.github.ratelimit.benchmarks.StubUpstream "$UPSTREAM_PORT" \
  > /tmp/gateway-bench-upstream.log 2>&1 &
PIDS+=($!)
# start_gateway <port> <log> [arguments]: the gateway on the server's CPU; sets GATEWAY_PID.
start_gateway() {
  local port=$1 log=$2
  shift 2
  "${APP_PIN[@]}" java -jar "$JAR" --server.port="$port" --upstream.uri="http://127.0.0.1:$UPSTREAM_PORT" \
    --spring.config.additional-location=file:benchmarks/gateway-routes.yml --spring.data.redis.port="$REDIS_PORT" \
    --logging.level.root=WARN "$@" > "$log" 2>&1 &
  GATEWAY_PID=$!
  PIDS+=("$GATEWAY_PID")
  wait_for "http://127.0.0.1:$port/actuator/health" "$GATEWAY_PID"
}

if [ -z "${EXACTNESS_ONLY:-}" ]; then
  echo "== In memory: this library's limiter (/bench/ours) against no limit (/bench/unlimited)"
  start_gateway "$PORT" /tmp/gateway-bench-memory.log
  measure_overhead "$GATEWAY_PID" /bench/unlimited /bench/ours
  kill "$GATEWAY_PID"; wait "$GATEWAY_PID" 2>/dev/null || true

  echo "== On Redis: this library's limiter (/bench/ours) against no limit (/bench/unlimited)"
  start_gateway "$PORT" /tmp/gateway-bench-redis-ours.log --spring.profiles.active=redis
  measure_overhead "$GATEWAY_PID" /bench/unlimited /bench/ours
  echo "== On Redis: this library's limiter (/bench/ours) against the gateway's RedisRateLimiter (/bench/redis-rate-limiter)"
  measure_overhead "$GATEWAY_PID" /bench/redis-rate-limiter /bench/ours
  kill "$GATEWAY_PID"; wait "$GATEWAY_PID" 2>/dev/null || true
fi

# The decisions a gateway left to its failure mode (allow): a store call that outlived ratelimit.redis.timeout.
fail_open() {
  curl -fs "http://127.0.0.1:$1/actuator/metrics/ratelimit.decisions?tag=policy:exact-ours&tag=outcome:fail_open" \
    | sed -n 's/.*"value":\([0-9.]*\).*/\1/p' || echo 0
}
TIMEOUT=${EXACTNESS_TIMEOUT:-5s}
echo "== Exactness: two gateways on one Redis (ratelimit.redis.timeout=$TIMEOUT), 200 concurrent requests of one client, limit 10"
start_gateway "$PORT" /tmp/gateway-bench-first.log --spring.profiles.active=redis --ratelimit.redis.timeout="$TIMEOUT"
FIRST_PID=$GATEWAY_PID
start_gateway "$SECOND_PORT" /tmp/gateway-bench-second.log --spring.profiles.active=redis \
  --ratelimit.redis.timeout="$TIMEOUT"
for path in /bench/exact-ours /bench/exact-redis-rate-limiter; do
  "${LOAD_PIN[@]}" java -cp "$BENCH_JAR" io.github.ratelimit.benchmarks.GatewayExactness \
    "http://127.0.0.1:$PORT" "http://127.0.0.1:$SECOND_PORT" "$path" 200
done
echo "decisions of /bench/exact-ours left to the failure mode (allow): $(fail_open "$PORT") + $(fail_open "$SECOND_PORT")"
kill "$FIRST_PID" "$GATEWAY_PID" 2>/dev/null || true
