#!/usr/bin/env bash
# What a change costs per request over HTTP: the sample app built at another commit (BEFORE)
# and at the working tree, side by side on one CPU, each answering
# /api/v1/resources (@RateLimited, in memory, metrics and the decision observation on, the limit out of reach).
# HttpOverhead alternates the load between the two apps in pairs of one-second phases, as http-overhead.sh does between
# two endpoints of one app, and prints the second app's CPU per request and throughput against the first's: "plain" is
# BEFORE, "limited" the working tree. About 15 minutes. Linux only (taskset, /proc).
#
#   BEFORE=e7eaa01 benchmarks/http-before-after.sh
set -euo pipefail
cd "$(dirname "$0")/.."
BEFORE=${BEFORE:?set BEFORE to the commit to compare with}
WORKTREE=$(mktemp -d)
git worktree add --detach "$WORKTREE" "$BEFORE" > /dev/null
cleanup() {
  kill "${BEFORE_PID:-}" "${AFTER_PID:-}" 2>/dev/null || true
  git worktree remove --force "$WORKTREE" > /dev/null 2>&1 || true
}
trap cleanup EXIT
(cd "$WORKTREE" && mvn -B -q -pl sample-app -am -DskipTests package)
mvn -B -q -pl benchmarks,sample-app -am -DskipTests package
echo # ends the line Maven leaves open
. benchmarks/overhead-common.sh
ARGS=(--ratelimit.filters.edge.enabled=false --ratelimit.policies.resources.limit=2000000000 --logging.level.root=WARN)
BEFORE_PORT=$PORT
AFTER_PORT=$((PORT + 1))
"${APP_PIN[@]}" java -jar "$(ls "$WORKTREE"/sample-app/target/sample-app-*.jar | grep -v original | head -1)" \
  --server.port="$BEFORE_PORT" "${ARGS[@]}" > /tmp/http-before.log 2>&1 &
BEFORE_PID=$!
"${APP_PIN[@]}" java -jar "$(ls sample-app/target/sample-app-*.jar | grep -v original | head -1)" \
  --server.port="$AFTER_PORT" "${ARGS[@]}" > /tmp/http-after.log 2>&1 &
AFTER_PID=$!
wait_for "http://127.0.0.1:$BEFORE_PORT/actuator/health" "$BEFORE_PID"
wait_for "http://127.0.0.1:$AFTER_PORT/actuator/health" "$AFTER_PID"
echo "plain: $BEFORE ($(git log -1 --format=%h "$BEFORE")), limited: the working tree ($(git log -1 --format=%h HEAD)$(git diff --quiet || echo ', modified'))"
"${LOAD_PIN[@]}" java -cp "$BENCH_JAR" io.github.ratelimit.benchmarks.HttpOverhead "http://127.0.0.1:$BEFORE_PORT" \
  /api/v1/resources "http://127.0.0.1:$AFTER_PORT/api/v1/resources" --app-pid="$BEFORE_PID" \
  --limited-app-pid="$AFTER_PID" --phase-pairs="${PHASE_PAIRS:-200}" --phase-millis="${PHASE_MILLIS:-1000}" \
  ${PHASE_LOG:+--phase-log="$PHASE_LOG"}
