#!/usr/bin/env bash
# Runs every benchmark on this machine, side by side with the peers, in bounded time, and prints one report of
# figures and ratios (also written to benchmarks/results/report.md).
#
#   benchmarks/run.sh           # the full run, about 90 minutes on 2 cores
#   benchmarks/run.sh --quick   # shorter iterations, about 15 minutes: for a first look, not for the record
#
# Needs a JDK 17+, Maven, redis-server, redis-cli and wrk (apt-get install redis-server wrk). Everything runs on
# 127.0.0.1 and stops by itself; the
# redis-server and sample applications it starts are stopped on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v wrk > /dev/null || { echo "wrk is not installed: sudo apt-get install wrk" >&2; exit 1; }

QUICK=0
if [ "${1:-}" = "--quick" ]; then QUICK=1; fi
RESULTS=benchmarks/results
rm -rf "$RESULTS"
mkdir -p "$RESULTS"

if [ "$QUICK" = 1 ]; then
  JMH_RUN=(-wi 1 -w 1s -i 2 -r 1s)
  LATENCY_RUN=(-wi 1 -w 1s -i 1 -r 1s)
  FORKS=1
  HTTP_SECONDS=5
else
  JMH_RUN=(-wi 2 -w 2s -i 5 -r 2s)
  # Sample mode collects thousands of samples a second: fewer iterations give stable percentiles.
  LATENCY_RUN=(-wi 1 -w 2s -i 3 -r 2s)
  # This shared 2-core machine varies a lot from one JVM to the next: the figures the targets are read at get
  # several forks, averaged by JMH.
  FORKS=3
  HTTP_SECONDS=15
fi

echo "== Building"
mvn -B -q -pl benchmarks,sample-app -am -DskipTests package
BENCH_JAR=benchmarks/target/benchmarks.jar
SAMPLE_JAR=$(ls sample-app/target/sample-app-*.jar | grep -v original | head -1)

PIDS=()
REDIS_DIR=$(mktemp -d)
cleanup() {
  for pid in "${PIDS[@]:-}"; do
    [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
  done
  [ -n "${REDIS_PORT:-}" ] && redis-cli -p "$REDIS_PORT" shutdown nosave >/dev/null 2>&1 || true
  rm -rf "$REDIS_DIR"
}
trap cleanup EXIT

# A free port below the kernel's ephemeral range, so that no client connection of the run can take it between
# this check and the server's bind (a run once lost its sample app to a port that was free when checked).
EPHEMERAL_LOW=$(awk '{print $1}' /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
free_port() {
  while true; do
    local port=$((10000 + RANDOM % (EPHEMERAL_LOW > 12000 ? EPHEMERAL_LOW - 10000 : 2000)))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "$port"
      return
    fi
  done
}

REDIS_PORT=$(free_port)
redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no --daemonize yes \
  --dir "$REDIS_DIR" --logfile "$REDIS_DIR/redis.log"
for _ in $(seq 1 50); do redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1 && break; sleep 0.1; done
export RATELIMIT_BENCH_REDIS="127.0.0.1:$REDIS_PORT"
# This redis-server is the run's own: every Redis trial starts on an empty keyspace (see KeyspaceReset).
export RATELIMIT_BENCH_FLUSH=true
echo "== Redis $(redis-server --version | awk '{print $3}') on port $REDIS_PORT"

{
  echo "Machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr)"
  echo "CPU: $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)"
  echo "Java: $(java -version 2>&1 | head -1)"
  echo "Redis: $(redis-server --version)"
  echo "Run: benchmarks/run.sh ${1:-} on $(date -u +%Y-%m-%dT%H:%MZ)"
} > "$RESULTS/machine.txt"

# jmh <name> <forks> <JMH arguments...>; iterations from JMH_ITERATIONS
JMH_ITERATIONS=("${JMH_RUN[@]}")
jmh() {
  local name=$1 forks=$2
  shift 2
  echo "== JMH $name"
  java -jar "$BENCH_JAR" "$@" "${JMH_ITERATIONS[@]}" -f "$forks" -rf csv -rff "$RESULTS/$name.csv" 2>&1 \
    | tee "$RESULTS/$name.log" | grep -E "^(Benchmark|InMemory|Redis)|REDIS-COMMANDS" || true
}

# In memory: ours, Bucket4j's local bucket and Resilience4j on 1 and 10,000 keys, 1 and 2 threads; whether a
# request passes (ours: tryAcquire(...).allowed()), and the whole answer (ours: the Decision; Bucket4j: its probe).
# In rounds of one fork each, every limiter once per round, averaged by the report: on this virtual machine two
# threads sharing 10,000 keys switch between about 12 and about 30 million decisions a second, in spells of
# seconds to minutes (two processes with one thread each do not: most likely the two cores passing the keys'
# cache lines to each other), and a slow spell can cover every consecutive fork of one limiter (docs/benchmarks.md).
for t in 1 2; do
  for round in $(seq 1 "$FORKS"); do
    name="memory-t$t"
    if [ "$FORKS" -gt 1 ]; then name="$name-round$round"; fi
    jmh "$name" 1 InMemoryDecisionBenchmark -t "$t" -prof gc
  done
done

# Redis: ours, Bucket4j (with and without batching) and the floor, side by side in one invocation per thread count
# (the floor's 'rejected' runs are the same as its 'allowed' ones; the report reads 'allowed'). The thread counts the
# targets are read at run in rounds of one fork each, every limiter once per round, and the report averages the
# rounds: a machine that slows down or speeds up during the run then weighs on ours and on the peers alike, where
# consecutive forks of one limiter would catch a slow spell for it alone.
for t in 1 4 16 64; do
  rounds=1
  # Five rounds at 16 threads, where the floor target sits within this machine's round-to-round spread (±30%).
  if [ "$t" = 16 ]; then rounds=$(( FORKS > 1 ? FORKS + 2 : 1 )); elif [ "$t" = 64 ]; then rounds=$(( FORKS > 1 ? 2 : 1 )); fi
  for round in $(seq 1 "$rounds"); do
    name="redis-t$t"
    if [ "$rounds" -gt 1 ]; then name="$name-round$round"; fi
    jmh "$name" 1 RedisDecisionBenchmark -t "$t" -p limiter=ratelimit-fixed,bucket4j,bucket4j-batching,floor
  done
done
# Every other algorithm and variant, at 16 threads; the other algorithms admitting at the other thread counts.
jmh "redis-algorithms-t16" 1 RedisDecisionBenchmark -t 16 \
  -p limiter=ratelimit-sliding-log,ratelimit-sliding-counter,ratelimit-token-bucket,ratelimit-leaky-bucket,ratelimit-fixed-uncoalesced,ratelimit-fixed-deny-cache
for t in 1 4 64; do
  jmh "redis-algorithms-t$t" 1 RedisDecisionBenchmark -t "$t" -p outcome=allowed \
    -p limiter=ratelimit-sliding-log,ratelimit-sliding-counter,ratelimit-token-bucket,ratelimit-leaky-bucket
done
# Latency percentiles: admissions at every thread count, rejections at 16 threads.
JMH_ITERATIONS=("${LATENCY_RUN[@]}")
for t in 1 4 16 64; do
  outcomes=allowed
  if [ "$t" = 16 ]; then outcomes=allowed,rejected; fi
  jmh "redis-latency-t$t" 1 RedisDecisionBenchmark -t "$t" -bm sample -p outcome="$outcomes" \
    -p limiter=ratelimit-fixed,bucket4j,bucket4j-batching,floor
done
JMH_ITERATIONS=("${JMH_RUN[@]}")

# HTTP: the sample app's endpoint with and without @RateLimited, in memory and on Redis.
load() {
  local label=$1 url=$2
  wrk -t2 -c16 -d"${HTTP_SECONDS}s" --latency "$url" > "$RESULTS/wrk-$label.txt"
  awk -v label="$label" '
    function micros(v) { if (v ~ /us$/) return v + 0; if (v ~ /ms$/) return v * 1000; if (v ~ /s$/) return v * 1000000; return v }
    /^ +50%/ { p50 = micros($2) } /^ +99%/ { p99 = micros($2) }
    /requests in/ { total = $1 } /Non-2xx/ { non2xx = $NF } /Requests\/sec/ { rps = $2 }
    END { printf "HTTP %s requests/s=%s p50_us=%d p99_us=%d 2xx=%d 429=0 other=%d\n", label, rps, p50, p99, total - non2xx, non2xx }
  ' "$RESULTS/wrk-$label.txt"
}

# Starts the sample app with the given profile; sets APP_PORT and APP_PID. Tries another port if the app exits
# before it answers (a port taken meanwhile by another process).
http_app() {
  local profile=$1
  for _ in 1 2 3; do
    APP_PORT=$(free_port)
    java -jar "$SAMPLE_JAR" --server.port="$APP_PORT" --spring.profiles.active="$profile" --ratelimit.filters.edge.enabled=false \
      --spring.data.redis.host=127.0.0.1 --spring.data.redis.port="$REDIS_PORT" \
      --ratelimit.policies.resources.limit=2000000000 --logging.level.root=WARN > "$RESULTS/app-$profile.txt" 2>&1 &
    APP_PID=$!
    PIDS+=("$APP_PID")
    for _ in $(seq 1 240); do
      if curl -fs "http://127.0.0.1:$APP_PORT/actuator/health" >/dev/null 2>&1; then return 0; fi
      kill -0 "$APP_PID" 2>/dev/null || break
      sleep 0.5
    done
    kill "$APP_PID" 2>/dev/null || true
    echo "Sample app ($profile) did not start on port $APP_PORT; see $RESULTS/app-$profile.txt" >&2
  done
  return 1
}

echo "== HTTP (wrk, ${HTTP_SECONDS}s per run)"
# Compares the unannotated and the @RateLimited endpoint of the sample app in one profile, in interleaved rounds.
http_compare() {
  local profile=$1 label=$2
  http_app "$profile"
  load warm-up "http://127.0.0.1:$APP_PORT/api/v1/unlimited" > /dev/null
  load warm-up "http://127.0.0.1:$APP_PORT/api/v1/resources" > /dev/null
  for round in 1 2 3; do
    load "$label-unlimited" "http://127.0.0.1:$APP_PORT/api/v1/unlimited"
    load "$label-limited" "http://127.0.0.1:$APP_PORT/api/v1/resources"
  done | tee "$RESULTS/http-$label.log"
  kill "$APP_PID" 2>/dev/null || true
}
http_compare default memory
http_compare redis redis

echo "== Report"
{
  echo "## Benchmark run"
  echo
  sed 's/^/    /' "$RESULTS/machine.txt"
  java -cp "$BENCH_JAR" io.github.ratelimit.benchmarks.Report "$RESULTS"
} | tee "$RESULTS/report.md"
