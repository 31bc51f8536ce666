#!/usr/bin/env bash
# What the three draft-6 rate limit headers cost in Tomcat itself, without the rate limiter or Spring: TomcatHeaderCost
# serves the same JSON body at /plain, and at /headers with RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset.
# HttpOverhead measures the two as http-overhead.sh measures the sample app, with the same pinning, phases and
# environment (its "limited" endpoint is /headers). About 9 minutes. Stops the server on exit. Linux only.
#
#   benchmarks/tomcat-header-cost.sh
set -euo pipefail
cd "$(dirname "$0")/.."
mvn -B -q -pl benchmarks -am -DskipTests package
echo # ends the line Maven leaves open
. benchmarks/overhead-common.sh
"${APP_PIN[@]}" java -cp "$BENCH_JAR" io.github.ratelimit.benchmarks.TomcatHeaderCost "$PORT" > /tmp/tomcat-header-cost.log 2>&1 &
APP_PID=$!
trap 'kill $APP_PID 2>/dev/null || true' EXIT
wait_for "http://127.0.0.1:$PORT/plain" "$APP_PID"
measure_overhead "$APP_PID" /plain /headers
curl -fsi "http://127.0.0.1:$PORT/headers" | head -8 || true
