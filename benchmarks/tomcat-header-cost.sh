#!/usr/bin/env bash
# What the three draft-6 rate limit headers cost in Tomcat itself, without the rate limiter or Spring: TomcatHeaderCost
# serves the same JSON body with and without RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset, and
# HttpOverhead measures the two as http-overhead.sh measures the sample app (same pinning, rounds and interleaving;
# its "limited" lines are /headers).
# About 4 minutes. Stops the server on exit.
#
#   benchmarks/tomcat-header-cost.sh
set -euo pipefail
cd "$(dirname "$0")/.."
mvn -B -q -pl benchmarks -am -DskipTests package
echo # ends the line Maven leaves open
BENCH_JAR=benchmarks/target/benchmarks.jar
PORT=$((20000 + RANDOM % 10000))
CORES=$(nproc)
APP_PIN=() LOAD_PIN=()
if [ "${PIN:-true}" = true ] && [ "$CORES" -ge 2 ] && command -v taskset > /dev/null; then
  APP_PIN=(taskset -c $((CORES - 1))) LOAD_PIN=(taskset -c 0-$((CORES - 2)))
  echo "Tomcat on core $((CORES - 1)), load generator on cores 0-$((CORES - 2))"
fi
"${APP_PIN[@]}" java -cp "$BENCH_JAR" io.github.ratelimit.benchmarks.TomcatHeaderCost "$PORT" > /tmp/tomcat-header-cost.log 2>&1 &
APP_PID=$!
trap 'kill $APP_PID 2>/dev/null || true' EXIT
for _ in $(seq 1 120); do
  curl -fs "http://127.0.0.1:$PORT/plain" > /dev/null 2>&1 && break
  sleep 0.5
done
"${LOAD_PIN[@]}" java -cp "$BENCH_JAR" io.github.ratelimit.benchmarks.HttpOverhead "http://127.0.0.1:$PORT" \
  /plain /headers --app-pid="$APP_PID" --rounds="${ROUNDS:-10}" --seconds="${SECONDS_PER_RUN:-5}" \
  --interleaved-rounds="${INTERLEAVED_ROUNDS:-10}"
curl -fsi "http://127.0.0.1:$PORT/headers" | head -8
