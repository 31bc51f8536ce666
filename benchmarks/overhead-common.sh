# Sourced by http-overhead.sh and tomcat-header-cost.sh: where the server and the load generator run, waiting for the
# server, and the measurement itself (HttpOverhead; ROUNDS, SECONDS_PER_RUN and INTERLEAVED_ROUNDS as documented there).
BENCH_JAR=benchmarks/target/benchmarks.jar
PORT=$((20000 + RANDOM % 10000))
# With taskset and 2 cores or more, the server gets the last core and the load generator the others (PIN=false: shared).
CORES=$(nproc)
APP_PIN=() LOAD_PIN=()
if [ "${PIN:-true}" = true ] && [ "$CORES" -ge 2 ] && command -v taskset > /dev/null; then
  APP_PIN=(taskset -c $((CORES - 1))) LOAD_PIN=(taskset -c 0-$((CORES - 2)))
  echo "server on core $((CORES - 1)), load generator on cores 0-$((CORES - 2))"
fi
# Wait up to 2 minutes for the URL to answer 2xx.
wait_for() {
  for _ in $(seq 1 240); do
    curl -fs "$1" > /dev/null 2>&1 && return 0
    sleep 0.5
  done
  echo "no answer from $1" >&2
  return 1
}
# measure_overhead <server pid> <plain path> <measured path>
measure_overhead() {
  "${LOAD_PIN[@]}" java -cp "$BENCH_JAR" io.github.ratelimit.benchmarks.HttpOverhead "http://127.0.0.1:$PORT" "$2" "$3" \
    --app-pid="$1" --rounds="${ROUNDS:-10}" --seconds="${SECONDS_PER_RUN:-5}" \
    --interleaved-rounds="${INTERLEAVED_ROUNDS:-10}"
}
