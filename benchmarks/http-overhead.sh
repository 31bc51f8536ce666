#!/usr/bin/env bash
# The HTTP part of run.sh on its own, in-memory profile only: what @RateLimited costs an endpoint end to end, with
# the sample app's metrics and observations on (Actuator, ratelimit.decision timed), after 60 s of warm-up, in 10
# interleaved rounds of 10 s per endpoint at 16 connections on 127.0.0.1; prints each round (with the app's CPU
# time per request, from /proc) and the median difference. About 5 minutes. Stops the app on exit.
#
#   benchmarks/http-overhead.sh
#   APP_ARGS=--management.observations.enable.ratelimit=false benchmarks/http-overhead.sh   # without the observation
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_RUN=${SECONDS_PER_RUN:-10}
mvn -B -q -pl benchmarks,sample-app -am -DskipTests package
echo # ends the line Maven leaves open
BENCH_JAR=benchmarks/target/benchmarks.jar
SAMPLE_JAR=$(ls sample-app/target/sample-app-*.jar | grep -v original | head -1)
PORT=$((20000 + RANDOM % 10000))
java -jar "$SAMPLE_JAR" --server.port="$PORT" --ratelimit.filters.edge.enabled=false --ratelimit.policies.resources.limit=2000000000 \
  --logging.level.root=WARN ${APP_ARGS:-} > /tmp/http-overhead-app.log 2>&1 &
APP_PID=$!
trap 'kill $APP_PID 2>/dev/null || true' EXIT
for _ in $(seq 1 240); do
  curl -fs "http://127.0.0.1:$PORT/actuator/health" > /dev/null 2>&1 && break
  sleep 0.5
done
load() { java -cp "$BENCH_JAR" io.github.ratelimit.benchmarks.HttpLoad "http://127.0.0.1:$PORT$1" 16 "$2"; }
# The app's CPU time (user and system, in clock ticks) so far; with a run's request count, its CPU per request.
app_ticks() { awk '{ print $14 + $15 }' "/proc/$APP_PID/stat"; }
TICKS_PER_SECOND=$(getconf CLK_TCK)
# One run: the load generator's line, and the app's CPU microseconds per request during it.
measure() {
  local before after line
  before=$(app_ticks)
  line=$(load "$1" "$SECONDS_PER_RUN")
  after=$(app_ticks)
  echo "$line app_cpu_us_per_request=$(echo "$line" | awk -v t=$((after - before)) -v hz="$TICKS_PER_SECOND" \
    '{ for (i = 1; i <= NF; i++) if ($i ~ /^(2xx|429|other)=/) { split($i, kv, "="); n += kv[2] } } END { printf "%.1f", (n > 0) ? t * 1e6 / hz / n : 0 }')"
}
# A long warm-up: the first seconds of a fresh JVM run at a fraction of its speed.
for _ in 1 2 3; do
  load /api/v1/unlimited 10 > /dev/null
  load /api/v1/resources 10 > /dev/null
done
# Rounds alternate which endpoint goes first, so that a machine getting slower or faster during a round does not
# always favour the same one; the figure is the median of the rounds' differences.
rate() { sed -n 's/^requests\/s=\([0-9]*\).*/\1/p'; }
diffs=(); unlimited_cpu=(); limited_cpu=()
cpu() { sed -n 's/.*app_cpu_us_per_request=\([0-9.]*\).*/\1/p'; }
median() { LC_ALL=C sort -g | awk '{ a[NR] = $1 } END { printf "%.1f", (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
for round in $(seq 1 "${ROUNDS:-10}"); do
  if [ $((round % 2)) -eq 1 ]; then
    unlimited=$(measure /api/v1/unlimited); limited=$(measure /api/v1/resources)
  else
    limited=$(measure /api/v1/resources); unlimited=$(measure /api/v1/unlimited)
  fi
  diff=$(awk -v u="$(echo "$unlimited" | rate)" -v l="$(echo "$limited" | rate)" 'BEGIN { printf "%+.1f", (u > 0) ? (l - u) * 100 / u : 0 }')
  diffs+=("$diff"); unlimited_cpu+=("$(echo "$unlimited" | cpu)"); limited_cpu+=("$(echo "$limited" | cpu)")
  echo "round $round unlimited $unlimited"
  echo "round $round limited   $limited"
  echo "round $round difference $diff%"
done
echo "median difference $(printf '%s\n' "${diffs[@]}" | median)%"
echo "median app CPU per request: unlimited $(printf '%s\n' "${unlimited_cpu[@]}" | median) us," \
  "limited $(printf '%s\n' "${limited_cpu[@]}" | median) us"
curl -fs "http://127.0.0.1:$PORT/actuator/metrics/ratelimit.decision" | head -c 300; echo
