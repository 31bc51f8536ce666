#!/usr/bin/env bash
# The time of each rate limit decision (the ratelimit.decision timer: the store's call included) under a burst, on
# Spring MVC against WebFlux, side by side: two instances of sample-app and two of sample-webflux-app on one local
# redis-server, the 'resources' policy at 50 per client, the edge filter off; ROUNDS (12) interleaved rounds, each a
# burst of 200 requests of a new client over 32 keep-alive connections per stack, the first 2 left out as warm-up.
# Prints each round's 50th and 99th percentiles per stack (bucket upper bounds, buckets 10% apart from 50 us), the
# medians with their range, and WebFlux's 99th percentile over MVC's per round. About 2 minutes. Needs redis-server
# and redis-cli; stops what it started on exit; logs in /tmp/burst-decision-time-*.log.
#
#   benchmarks/burst-decision-time.sh
#   ROUNDS=20 CONNECTIONS=64 benchmarks/burst-decision-time.sh
#   BUILD_ARGS=-Pboot-4.1 benchmarks/burst-decision-time.sh      # built on Spring Boot 4.1
set -euo pipefail
cd "$(dirname "$0")/.."
command -v redis-server > /dev/null && command -v redis-cli > /dev/null \
  || { echo "redis-server and redis-cli are needed: sudo apt-get install redis-server" >&2; exit 1; }
# A jar left from another build keeps its libraries when nothing of the module changed: build it afresh.
rm -f sample-app/target/*.jar sample-webflux-app/target/*.jar
mvn -B -q ${BUILD_ARGS:-} -pl benchmarks,sample-app,sample-webflux-app -am -DskipTests package
echo # ends the line Maven leaves open

PIDS=()
cleanup() { [ "${#PIDS[@]}" -eq 0 ] || kill "${PIDS[@]}" 2> /dev/null || true; }
trap cleanup EXIT
USED_PORTS=" "
# free_port: a port nothing listens on, not handed out before by this script.
free_port() {
  local port
  while :; do
    port=$((20000 + RANDOM % 40000))
    [[ $USED_PORTS == *" $port "* ]] && continue
    (exec 3<> "/dev/tcp/127.0.0.1/$port") 2> /dev/null && continue
    USED_PORTS+="$port "
    echo "$port"
    return 0
  done
}

REDIS_PORT=$(free_port)
redis-server --port "$REDIS_PORT" --save '' --appendonly no --daemonize no > /tmp/burst-decision-time-redis.log 2>&1 &
PIDS+=($!)
for _ in $(seq 1 50); do redis-cli -p "$REDIS_PORT" ping > /dev/null 2>&1 && break; sleep 0.1; done

# Histogram buckets of the decision timer, 10% apart from 50 us to about 5 s.
BUCKETS=$(awk 'BEGIN { b = 50; while (b < 5000000) { printf "%s%dus", sep, b; sep = ","; b = b * 1.1 } }')

# start <sample> <port>: one instance on the shared Redis, in the background.
start() {
  local jar
  jar=$(ls "$1"/target/"$1"-*.jar | grep -v original | head -1)
  java -jar "$jar" --server.port="$2" --spring.profiles.active=redis --spring.data.redis.port="$REDIS_PORT" \
    --ratelimit.policies.resources.limit=50 --ratelimit.filters.edge.enabled=false \
    --ratelimit.client-ip.trusted-proxies=127.0.0.1,::1 --logging.level.root=WARN \
    --management.metrics.distribution.slo.ratelimit.decision="$BUCKETS" \
    > "/tmp/burst-decision-time-$1-$2.log" 2>&1 &
  PIDS+=($!)
}

MVC=()
WEBFLUX=()
for _ in 1 2; do
  port=$(free_port); start sample-app "$port"; MVC+=("http://127.0.0.1:$port")
  port=$(free_port); start sample-webflux-app "$port"; WEBFLUX+=("http://127.0.0.1:$port")
done
for base in "${MVC[@]}" "${WEBFLUX[@]}"; do
  for _ in $(seq 1 240); do
    curl -fs "$base/actuator/health" > /dev/null 2>&1 && break
    sleep 0.5
  done
  curl -fs "$base/actuator/prometheus" > /dev/null || { echo "$base did not start: see /tmp/burst-decision-time-*.log" >&2; exit 1; }
done

java -cp benchmarks/target/benchmarks.jar io.github.ratelimit.benchmarks.BurstDecisionTime \
  --mvc="$(IFS=,; echo "${MVC[*]}")" --webflux="$(IFS=,; echo "${WEBFLUX[*]}")" \
  --rounds="${ROUNDS:-12}" --connections="${CONNECTIONS:-32}" --requests=200 --warm-up=2
grep -h "did not answer\|could not decide\|circuit opened" /tmp/burst-decision-time-sample-*.log | head -5 || true
