#!/usr/bin/env bash
# What each part of a limited request costs the application over HTTP, told apart by running the same endpoint of
# benchmarks-peers in several applications at once and loading them in turns (ROUNDS rounds of SECONDS seconds each,
# the order the same in every round, `wrk -t1 -c16` on one hot client behind a trusted proxy; the applications on one
# CPU and wrk and redis-server on the others, as in peers.sh, PIN=false to share them):
#
#   off      ratelimit.enabled=false: Tomcat and Spring MVC alone          /unlimited
#   memory   the starter in memory                                        /unlimited (no filter matches), /ours
#   redis    the starter on Redis                                         /ours, /ours with lease: auto (the hot policy)
#   before   with BEFORE=<commit>: the starter on Redis built at that commit  /ours
#
# For each: requests a second, the application's CPU per request (user and system time from /proc), its voluntary
# context switches per request, and Redis's CPU and script calls per request; median of the rounds, with the least
# and the most. The parts follow by difference: the filter and settle bookkeeping of a request that no filter matches
# (memory /unlimited - off /unlimited), the decision in memory (memory /ours - memory /unlimited), the store call on
# Redis (redis /ours - memory /ours). Needs wrk, redis-server and redis-cli; about 8 minutes with the defaults.
# Linux only (/proc).
#
#   benchmarks/http-parts.sh
#   BEFORE=58097be benchmarks/http-parts.sh              # the Redis decision as it was at 58097be, side by side
#   ROUNDS=3 SECONDS_PER_RUN=5 benchmarks/http-parts.sh  # quicker, noisier
set -euo pipefail
cd "$(dirname "$0")/.."
export LC_ALL=C
for tool in wrk redis-server redis-cli; do
  command -v "$tool" > /dev/null || { echo "$tool is needed" >&2; exit 1; }
done
ROUNDS=${ROUNDS:-5}
SECONDS_PER_RUN=${SECONDS_PER_RUN:-8}
PIDS=()
WORKTREE=
cleanup() {
  [ "${#PIDS[@]}" -eq 0 ] || kill "${PIDS[@]}" 2> /dev/null || true
  [ -z "$WORKTREE" ] || git worktree remove --force "$WORKTREE" > /dev/null 2>&1 || true
}
trap cleanup EXIT
rm -f benchmarks-peers/target/*.jar
${MVN:-mvn} -B -q -pl benchmarks-peers -am -DskipTests package
JAR=$(ls benchmarks-peers/target/benchmarks-peers-*.jar | grep -v original | head -1)
BEFORE_JAR=
if [ -n "${BEFORE:-}" ]; then
  WORKTREE=$(mktemp -d)
  git worktree add --detach "$WORKTREE" "$BEFORE" > /dev/null
  (cd "$WORKTREE" && ${MVN:-mvn} -B -q -pl benchmarks-peers -am -DskipTests package)
  BEFORE_JAR=$(ls "$WORKTREE"/benchmarks-peers/target/benchmarks-peers-*.jar | grep -v original | head -1)
fi
echo
. benchmarks/overhead-common.sh # APP_PIN, LOAD_PIN: the apps on the last CPU, wrk and redis-server on the others
REDIS_PORT=$((20000 + RANDOM % 10000))
"${LOAD_PIN[@]}" redis-server --port "$REDIS_PORT" --save '' --appendonly no --daemonize no > /tmp/http-parts-redis.log 2>&1 &
REDIS_PID=$!
PIDS+=("$REDIS_PID")
for _ in $(seq 1 50); do redis-cli -p "$REDIS_PORT" ping > /dev/null 2>&1 && break; sleep 0.1; done

declare -A APP_PID=() APP_PORT=()
APPS=0
start() { # name jar args...
  local name=$1 jar=$2 port=$((REDIS_PORT + 10000 + APPS))
  shift 2
  "${APP_PIN[@]}" java -jar "$jar" --server.port="$port" --spring.data.redis.host=127.0.0.1 --spring.data.redis.port="$REDIS_PORT" \
    "$@" > "/tmp/http-parts-$name.log" 2>&1 &
  APP_PID[$name]=$!
  APP_PORT[$name]=$port
  APPS=$((APPS + 1))
  PIDS+=("$!")
}
start off "$JAR" --ratelimit.enabled=false
start memory "$JAR" --spring.profiles.active=ours-memory
start redis "$JAR" --spring.profiles.active=ours-redis
start leased "$JAR" --spring.profiles.active=ours-redis --ratelimit.policies.hot.lease=auto \
  --ratelimit.redis.key-prefix=leased
RUNS=("off /unlimited" "memory /unlimited" "memory /ours" "redis /ours" "leased /ours")
if [ -n "$BEFORE_JAR" ]; then
  start before "$BEFORE_JAR" --spring.profiles.active=ours-redis --ratelimit.redis.key-prefix=before
  RUNS+=("before /ours")
fi
for name in "${!APP_PORT[@]}"; do
  for _ in $(seq 1 180); do curl -fs -o /dev/null "http://127.0.0.1:${APP_PORT[$name]}/unlimited" && break; sleep 0.5; done
done

load() { # name endpoint seconds
  "${LOAD_PIN[@]}" wrk -t1 -c16 -d"$3s" -H "X-Forwarded-For: 203.0.113.7" "http://127.0.0.1:${APP_PORT[$1]}$2"
}
cpu() { awk '{ print $14, $15 }' "/proc/$1/stat"; } # user and system time, in clock ticks
switches() { cat /proc/"$1"/task/*/status 2> /dev/null | awk '/^voluntary_ctxt_switches/ { s += $2 } END { print s }'; }
calls() { redis-cli -p "$REDIS_PORT" INFO commandstats | awk -F'[=,:]' '/^cmdstat_evalsha/ { print $3 } END { print 0 }' | head -1; }
TICK_MICROS=$((1000000 / $(getconf CLK_TCK)))

echo "Warming up: 20 s a run, twice"
for _ in 1 2; do
  for run in "${RUNS[@]}"; do
    read -r name endpoint <<< "$run"
    load "$name" "$endpoint" 10 > /dev/null
  done
done
RESULTS=$(mktemp)
for round in $(seq 1 "$ROUNDS"); do
  for run in "${RUNS[@]}"; do
    read -r name endpoint <<< "$run"
    pid=${APP_PID[$name]}
    read -r u0 s0 <<< "$(cpu "$pid")"
    read -r ru0 rs0 <<< "$(cpu "$REDIS_PID")"
    w0=$(switches "$pid")
    c0=$(calls)
    out=$(load "$name" "$endpoint" "$SECONDS_PER_RUN")
    read -r u1 s1 <<< "$(cpu "$pid")"
    read -r ru1 rs1 <<< "$(cpu "$REDIS_PID")"
    w1=$(switches "$pid")
    c1=$(calls)
    n=$(awk '/requests in/ { print $1 }' <<< "$out")
    rps=$(awk '/Requests\/sec/ { print $2 }' <<< "$out")
    awk -v run="$name $endpoint" -v n="$n" -v rps="$rps" -v t="$TICK_MICROS" -v u=$((u1 - u0)) -v s=$((s1 - s0)) \
      -v r=$((ru1 - ru0 + rs1 - rs0)) -v w=$((w1 - w0)) -v c=$((c1 - c0)) \
      'BEGIN { printf "%s\t%.0f\t%.1f\t%.1f\t%.1f\t%.2f\t%.1f\t%.3f\n", run, rps, (u + s) * t / n, u * t / n, s * t / n, w / n, r * t / n, c / n }' \
      >> "$RESULTS"
  done
  echo "round $round done"
done
echo
printf "%-18s %22s %22s %16s %16s %14s %16s %16s\n" "app endpoint" "requests/s" "app CPU us/request" "user" "system" \
  "switches/req" "Redis CPU us/req" "script calls/req"
for run in "${RUNS[@]}"; do
  awk -F'\t' -v run="$run" '$1 == run' "$RESULTS" | awk -F'\t' -v run="$run" '
    { for (i = 2; i <= 8; i++) v[i, NR] = $i; n = NR }
    function median(col,   a, j, k, x) {
      for (k = 1; k <= n; k++) { x = v[col, k] + 0; for (j = k - 1; j >= 1 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
      return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    function lo(col,   k, m) { m = v[col, 1] + 0; for (k = 2; k <= n; k++) if (v[col, k] + 0 < m) m = v[col, k] + 0; return m }
    function hi(col,   k, m) { m = v[col, 1] + 0; for (k = 2; k <= n; k++) if (v[col, k] + 0 > m) m = v[col, k] + 0; return m }
    END {
      printf "%-18s %8.0f (%5.0f..%5.0f) %6.1f (%5.1f..%5.1f) %16.1f %16.1f %14.2f %16.1f %16.3f\n", run,
        median(2), lo(2), hi(2), median(3), lo(3), hi(3), median(4), median(5), median(6), median(7), median(8)
    }'
done
rm -f "$RESULTS"
