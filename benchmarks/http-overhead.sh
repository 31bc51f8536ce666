#!/usr/bin/env bash
# The HTTP part of run.sh on its own, in-memory profile only: what @RateLimited costs an endpoint end to end, with
# the sample app's metrics and observations on (Actuator, ratelimit.decision timed). Runs HttpOverhead against
# /api/v1/unlimited and /api/v1/resources: warm-up until the app's JIT compiler is done, then ROUNDS (10) rounds of
# SECONDS_PER_RUN (5) s per endpoint at 16 connections on 127.0.0.1 that alternate which endpoint goes first, then
# INTERLEAVED_ROUNDS (10) rounds in which every connection sends to both endpoints in turn; prints each run (with the
# app's CPU time per request) and the medians. Where taskset is installed and 2 CPUs or more are allowed, the app runs
# on the last CPU and the load generator on the others (see overhead-common.sh). About 5 to 8 minutes, most of it
# waiting for the JIT compiler. Stops the app on exit. Linux only (/proc, taskset).
#
#   benchmarks/http-overhead.sh
#   APP_ARGS=--management.observations.enable.ratelimit=false benchmarks/http-overhead.sh   # without the observation
#   ROUNDS=0 INTERLEAVED_ROUNDS=20 benchmarks/http-overhead.sh                              # interleaved rounds only
set -euo pipefail
cd "$(dirname "$0")/.."
mvn -B -q -pl benchmarks,sample-app -am -DskipTests package
echo # ends the line Maven leaves open
. benchmarks/overhead-common.sh
SAMPLE_JAR=$(ls sample-app/target/sample-app-*.jar | grep -v original | head -1)
"${APP_PIN[@]}" java -jar "$SAMPLE_JAR" --server.port="$PORT" --ratelimit.filters.edge.enabled=false \
  --ratelimit.policies.resources.limit=2000000000 --logging.level.root=WARN ${APP_ARGS:-} > /tmp/http-overhead-app.log 2>&1 &
APP_PID=$!
trap 'kill $APP_PID 2>/dev/null || true' EXIT
wait_for "http://127.0.0.1:$PORT/actuator/health" "$APP_PID"
measure_overhead "$APP_PID" /api/v1/unlimited /api/v1/resources
curl -fs "http://127.0.0.1:$PORT/actuator/metrics/ratelimit.decision" | head -c 300 || true; echo
