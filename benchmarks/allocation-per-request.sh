#!/usr/bin/env bash
# What a request allocates, in bytes, on /api/v1/unlimited and on /api/v1/resources (@RateLimited) of the sample app
# started as http-overhead.sh starts it: after 60 s of warm-up per endpoint, ROUNDS (2) rounds of SECONDS_PER_RUN (15)
# seconds per endpoint. The app runs on one CPU, where its JVM uses the serial collector, which empties eden whenever
# it is full: the bytes allocated in a run are the young collections in it times eden's capacity, plus the change in
# eden's use, both read with jstat (JDK) before and after the run. Good to about one eden (100 MB here) per run, so
# under a few bytes per request over a million requests. Stops the app on exit. Linux only (taskset, /proc).
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
# young collections, eden capacity and eden use (KB): columns YGC, EC and EU of jstat -gc
eden() { jstat -gc "$APP_PID" | awk 'NR == 1 { for (i = 1; i <= NF; i++) column[$i] = i } NR == 2 { print $column["YGC"], $column["EC"], $column["EU"] }'; }
load() { "${LOAD_PIN[@]}" java -cp "$BENCH_JAR" io.github.ratelimit.benchmarks.HttpLoad "http://127.0.0.1:$PORT$1" 16 "$2"; }
for path in /api/v1/unlimited /api/v1/resources; do load "$path" 60 > /dev/null; done
for round in $(seq 1 "${ROUNDS:-2}"); do
  for path in /api/v1/unlimited /api/v1/resources; do
    read -r gcs0 capacity0 used0 < <(eden)
    result=$(load "$path" "${SECONDS_PER_RUN:-15}")
    read -r gcs1 capacity1 used1 < <(eden)
    requests=$(sed -n 's/.* 2xx=\([0-9]*\).*/\1/p' <<< "$result")
    awk -v path="$path" -v round="$round" -v g0="$gcs0" -v g1="$gcs1" -v c="$capacity1" -v u0="$used0" -v u1="$used1" \
      -v n="$requests" 'BEGIN { printf "round %d %-18s %9d requests, %3d young collections, %6.0f bytes per request\n",
        round, path, n, g1 - g0, ((g1 - g0) * c + u1 - u0) * 1024 / n }'
  done
done
