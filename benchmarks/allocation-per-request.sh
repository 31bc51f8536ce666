#!/usr/bin/env bash
# What a request allocates, in bytes, on /api/v1/unlimited and on /api/v1/resources (@RateLimited) of the sample app
# started as http-overhead.sh starts it: HttpAllocation warms both endpoints up for 60 s each, then runs ROUNDS (3)
# rounds of SECONDS_PER_RUN (15) seconds per endpoint at 16 connections, reading the app's per-thread allocation
# counters (ThreadMXBean, through the JVM's attach mechanism) before and after each run. About 3 minutes. Stops the
# app on exit. Linux only (taskset, /proc).
#
#   benchmarks/allocation-per-request.sh
#   APP_ARGS=--ratelimit.headers.style=none benchmarks/allocation-per-request.sh
set -euo pipefail
cd "$(dirname "$0")/.."
mvn -B -q -pl benchmarks,sample-app -am -DskipTests package
echo # ends the line Maven leaves open
. benchmarks/overhead-common.sh
SAMPLE_JAR=$(ls sample-app/target/sample-app-*.jar | grep -v original | head -1)
"${APP_PIN[@]}" java -jar "$SAMPLE_JAR" --server.port="$PORT" --ratelimit.filters.edge.enabled=false \
  --ratelimit.policies.resources.limit=2000000000 --logging.level.root=WARN ${APP_ARGS:-} > /tmp/allocation-app.log 2>&1 &
APP_PID=$!
trap 'kill $APP_PID 2>/dev/null || true' EXIT
wait_for "http://127.0.0.1:$PORT/actuator/health" "$APP_PID"
"${LOAD_PIN[@]}" java -cp "$BENCH_JAR" io.github.ratelimit.benchmarks.HttpAllocation "http://127.0.0.1:$PORT" \
  /api/v1/unlimited "${LIMITED:-/api/v1/resources}" --app-pid="$APP_PID" --rounds="${ROUNDS:-3}" \
  --seconds="${SECONDS_PER_RUN:-15}"
