#!/usr/bin/env bash
# The HTTP part of run.sh on its own, in-memory profile only: what @RateLimited costs an endpoint end to end, with
# the sample app's metrics and observations on (Actuator, ratelimit.decision timed). Runs HttpOverhead against
# /api/v1/unlimited and /api/v1/resources at 16 connections on 127.0.0.1: warm-up until the app's JIT compiler is
# done, then PHASE_PAIRS (200) pairs of phases of PHASE_MILLIS (1000) ms, one endpoint per phase, the order
# alternating from pair to pair; prints the limited endpoint's CPU per request and throughput against the plain one's
# (median and mean of the pairs, with 95% confidence intervals). Where taskset is installed and 2 CPUs or more are
# allowed, the app runs on the last CPU and the load generator on the others (see overhead-common.sh). About 10 to 14
# minutes. Stops the app on exit. Linux only (/proc, taskset).
#
#   benchmarks/http-overhead.sh
#   APP_ARGS=--ratelimit.headers.style=none benchmarks/http-overhead.sh      # without the rate limit headers
#   LIMITED=/api/v1/unlimited benchmarks/http-overhead.sh                    # the plain endpoint against itself
#   PHASE_LOG=/tmp/phases.csv benchmarks/http-overhead.sh                    # every phase written out
#   SAMPLE=sample-webflux-app benchmarks/http-overhead.sh                    # the same on WebFlux (Reactor Netty)
#   BUILD_ARGS=-Pboot-4.1 SAMPLE=sample-webflux-app benchmarks/http-overhead.sh   # built on Spring Boot 4.1
set -euo pipefail
cd "$(dirname "$0")/.."
# A jar left from another build keeps its libraries when nothing of the module changed: build it afresh.
rm -f "${SAMPLE:-sample-app}"/target/*.jar
mvn -B -q ${BUILD_ARGS:-} -pl "benchmarks,${SAMPLE:-sample-app}" -am -DskipTests package
echo # ends the line Maven leaves open
. benchmarks/overhead-common.sh
start_sample_app /tmp/http-overhead-app.log
measure_overhead "$APP_PID" /api/v1/unlimited "${LIMITED:-/api/v1/resources}"
curl -fs "http://127.0.0.1:$PORT/actuator/metrics/ratelimit.decision" | head -c 300 || true; echo
