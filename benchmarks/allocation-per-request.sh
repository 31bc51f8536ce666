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
start_sample_app /tmp/allocation-app.log
"${LOAD_PIN[@]}" java -cp "$BENCH_JAR" io.github.ratelimit.benchmarks.HttpAllocation "http://127.0.0.1:$PORT" \
  /api/v1/unlimited "${LIMITED:-/api/v1/resources}" --app-pid="$APP_PID" --rounds="${ROUNDS:-3}" \
  --seconds="${SECONDS_PER_RUN:-15}"
