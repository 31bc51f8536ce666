# Sourced by http-overhead.sh, tomcat-header-cost.sh and allocation-per-request.sh (Linux, bash 4.4 or later): where
# the server and the load generator run, starting the sample app, waiting for a server, and the measurement itself.
# Environment: PHASE_PAIRS (default 200) and PHASE_MILLIS (default 1000), the phases of the measurement; PHASE_LOG, a
# CSV file to write every phase to; ROUNDS (default 0) rounds of SECONDS_PER_RUN (default 5) of one endpoint at a
# time, a coarser cross-check; PIN (default true).
BENCH_JAR=benchmarks/target/benchmarks.jar
PORT=$((20000 + RANDOM % 10000))
# The CPUs this shell may use, one per line ("0-3,6" in /proc/self/status becomes 0 1 2 3 6).
allowed_cpus() {
  local list part
  list=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)
  for part in ${list//,/ }; do
    if [[ $part == *-* ]]; then seq "${part%-*}" "${part#*-}"; else echo "$part"; fi
  done
}
# With taskset and 2 CPUs or more, the server gets the last CPU and the load generator the others (PIN=false: shared,
# for a machine where that is how they run; the load generator then takes CPU from the server in every phase).
APP_PIN=() LOAD_PIN=()
if [ "${PIN:-true}" = true ] && command -v taskset > /dev/null; then
  mapfile -t CPUS < <(allowed_cpus)
  if [ "${#CPUS[@]}" -ge 2 ]; then
    APP_CPU=${CPUS[-1]}
    LOAD_CPUS=$(IFS=,; echo "${CPUS[*]:0:${#CPUS[@]}-1}")
    APP_PIN=(taskset -c "$APP_CPU") LOAD_PIN=(taskset -c "$LOAD_CPUS")
    echo "server on CPU $APP_CPU, load generator on CPUs $LOAD_CPUS"
  fi
fi
# wait_for <url> <server pid>: up to 2 minutes for the URL to answer 2xx, while the server runs.
wait_for() {
  for _ in $(seq 1 240); do
    curl -fs "$1" > /dev/null 2>&1 && return 0
    kill -0 "$2" 2> /dev/null || { echo "the server stopped before answering $1" >&2; return 1; }
    sleep 0.5
  done
  echo "no answer from $1" >&2
  return 1
}
# start_sample_app <log file>: the sample app as the measurements run it (in-memory store, the edge filter off, the
# limit of /api/v1/resources out of reach, APP_ARGS added) on the server's CPU; sets APP_PID, stops the app when the
# script exits, and waits for it to answer. SAMPLE=sample-webflux-app runs the WebFlux sample, same contract.
SAMPLE=${SAMPLE:-sample-app}
start_sample_app() {
  local jar
  jar=$(ls "$SAMPLE"/target/"$SAMPLE"-*.jar | grep -v original | head -1)
  "${APP_PIN[@]}" java -jar "$jar" --server.port="$PORT" --ratelimit.filters.edge.enabled=false \
    --ratelimit.policies.resources.limit=2000000000 --logging.level.root=WARN ${APP_ARGS:-} > "$1" 2>&1 &
  APP_PID=$!
  trap 'kill $APP_PID 2>/dev/null || true' EXIT
  wait_for "http://127.0.0.1:$PORT/actuator/health" "$APP_PID"
}
# measure_overhead <server pid> <plain path> <measured path>
measure_overhead() {
  "${LOAD_PIN[@]}" java -cp "$BENCH_JAR" io.github.ratelimit.benchmarks.HttpOverhead "http://127.0.0.1:$PORT" "$2" "$3" \
    --app-pid="$1" --phase-pairs="${PHASE_PAIRS:-200}" --phase-millis="${PHASE_MILLIS:-1000}" \
    ${PHASE_LOG:+--phase-log="$PHASE_LOG"} --rounds="${ROUNDS:-0}" --seconds="${SECONDS_PER_RUN:-5}"
}
