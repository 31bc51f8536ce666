#!/usr/bin/env bash
# This library's @RateLimited against bucket4j-spring-boot-starter 0.14.0-RC1's servlet filter, end to end over HTTP,
# side by side in one run, on the same endpoint body ("ok") of one application (benchmarks-peers):
#
#   unlimited         /unlimited of the ours-memory process: no limiter, the baseline
#   ours-memory       /ours, @RateLimited, counters in memory
#   bucket4j-memory   /peer, Bucket4j's filter on JCache (Caffeine's provider), its documented in-memory set-up
#   ours-redis        /ours, counters in Redis through Spring Data Redis on Lettuce
#   ours-redis-lease  the same with lease: auto, units taken a block at a time (docs/scaling.md)
#   bucket4j-jedis    /peer, Bucket4j on Redis through Jedis (cache-to-use redis-jedis, a JedisPool bean)
#   bucket4j-lettuce  /peer, Bucket4j on Redis through Lettuce (a RedisClient bean; the starter's own Lettuce back end
#                     serves reactive filters only, so the app supplies a SyncCacheResolver on the same proxy manager)
#
# Limits never reject (1,000,000,000 a minute), keyed per client address: ours by client IP with
# ratelimit.client-ip.trusted-proxies=127.0.0.1/32 reading X-Forwarded-For, Bucket4j by getHeader('X-Forwarded-For').
# Two scenarios: "hot", one client (X-Forwarded-For: 203.0.113.7), and "many", 10,000 clients in turn
# (benchmarks/peers-many-clients.lua).
#
# One redis-server on a free port; one app process per profile (and extra arguments), each on its own free port. With
# taskset and 2 CPUs or more, every app runs on the last allowed CPU and redis-server and wrk on the others (see
# overhead-common.sh; PIN=false shares them). Each configuration is warmed up (WARMUP_SECONDS of wrk, half per
# scenario), then ROUNDS interleaved rounds: in each round, per scenario, every configuration in an order that rotates
# from round to round gets `wrk -t1 -c16 -d${SECONDS_PER_RUN}s`. Any non-2xx response fails the run. Prints per
# scenario: median requests/s with min..max over rounds, the median ratio to unlimited of the same round (min..max),
# and the app's CPU per request (utime+stime of the process over the run, /proc/<pid>/stat). About 15 minutes with the
# defaults (6 configurations: ~1 min start-up, 2 min warm-up, 5 rounds x 2 scenarios x 6 x 10 s).
#
# EXACTNESS=1 measures instead how many requests two instances sharing one Redis admit over a limit of EXACTNESS_LIMIT
# (1,000) a minute: for each of EXACT_CONFIGS (default "ours-redis bucket4j-jedis bucket4j-lettuce"), two instances,
# warmed up for EXACTNESS_WARMUP_SECONDS (5) with 10,000 clients, then EXACTNESS_REPEATS (3) times: FLUSHALL, then
# wrk -t1 -c32 -d${EXACTNESS_SECONDS:-3}s on both at once, one client (a new address per repeat, so that no instance
# remembers an earlier repeat). Admitted = the requests the endpoint served, counted by the app (/admitted/...), so
# that a response wrk stopped waiting for still counts. Ours runs with ratelimit.redis.timeout=EXACTNESS_TIMEOUT (5s),
# so that no decision goes to the failure mode (allow); Bucket4j with refill-speed interval, so that no token comes
# back within the run (its default, greedy, adds limit/60 tokens a second). A run is moved off a minute's last seconds:
# our fixed window is aligned to the clock. About 2 to 5 minutes.
#
# Linux only (/proc, taskset). Needs wrk, redis-server and redis-cli. Stops everything it started on exit; logs in
# /tmp/peers-*.log.
#
#   benchmarks/peers.sh
#   ROUNDS=1 SECONDS_PER_RUN=2 WARMUP_SECONDS=4 benchmarks/peers.sh          # a smoke run, a few minutes
#   CONFIGS="unlimited ours-redis bucket4j-jedis" benchmarks/peers.sh          # some configurations only
#   RESULTS=/tmp/peers.csv benchmarks/peers.sh                                # every run written out as CSV
#   EXACTNESS=1 benchmarks/peers.sh                                           # over-admission, two instances
#   BUILD_ARGS=-Pboot-4.1 benchmarks/peers.sh                                 # built on Spring Boot 4.1
#   JAVA_OPTS=-Xmx512m benchmarks/peers.sh                                    # JVM options of every app
#   MVN="flock /tmp/maven.lock mvn -o" benchmarks/peers.sh                    # how Maven is run
set -euo pipefail
cd "$(dirname "$0")/.."
export LC_ALL=C # decimal points for sort, awk and printf

# The configurations: name|profile|endpoint|extra application arguments. Configurations with the same profile and
# arguments share one process (unlimited is measured on ours-memory's). To add one, add a line, e.g.
#   "ours-redis-lease|ours-redis|/ours|--ratelimit.policies.hot.lease=auto"
CONFIG_TABLE=(
  "unlimited|ours-memory|/unlimited|"
  "ours-memory|ours-memory|/ours|"
  "bucket4j-memory|bucket4j-memory|/peer|"
  "ours-redis|ours-redis|/ours|"
  "ours-redis-lease|ours-redis|/ours|--ratelimit.policies.hot.lease=auto"
  "bucket4j-jedis|bucket4j-jedis|/peer|"
  "bucket4j-lettuce|bucket4j-lettuce|/peer|"
)
ALL_CONFIGS=$(for entry in "${CONFIG_TABLE[@]}"; do printf '%s ' "${entry%%|*}"; done)
CONFIGS=${CONFIGS:-$ALL_CONFIGS}
EXACT_CONFIGS=${EXACT_CONFIGS:-ours-redis ours-redis-lease bucket4j-jedis bucket4j-lettuce}
ROUNDS=${ROUNDS:-5}
SECONDS_PER_RUN=${SECONDS_PER_RUN:-10}
WARMUP_SECONDS=${WARMUP_SECONDS:-20}
EXACT_LIMIT=${EXACTNESS_LIMIT:-1000}
EXACTNESS_REPEATS=${EXACTNESS_REPEATS:-3}
HOT_CLIENT=203.0.113.7
MANY_SCRIPT=benchmarks/peers-many-clients.lua

command -v wrk > /dev/null || { echo "wrk is not installed: sudo apt-get install wrk" >&2; exit 1; }
command -v redis-server > /dev/null && command -v redis-cli > /dev/null \
  || { echo "redis-server and redis-cli are needed: sudo apt-get install redis-server" >&2; exit 1; }

# config_field <name> <field: 2 profile, 3 endpoint, 4 arguments>
config_field() {
  local entry
  for entry in "${CONFIG_TABLE[@]}"; do
    if [ "${entry%%|*}" = "$1" ]; then echo "$entry" | cut -d'|' -f"$2"; return 0; fi
  done
  echo "unknown configuration '$1'; known: $ALL_CONFIGS" >&2
  return 1
}
for name in $CONFIGS $EXACT_CONFIGS; do config_field "$name" 2 > /dev/null; done

# A jar left from another build keeps its libraries when nothing of the module changed: build it afresh.
rm -f benchmarks-peers/target/*.jar
# shellcheck disable=SC2086 # MVN and BUILD_ARGS are lists of words
${MVN:-mvn} -B -q ${BUILD_ARGS:-} -pl benchmarks-peers -am -DskipTests package
echo # ends the line Maven leaves open
JAR=$(ls benchmarks-peers/target/benchmarks-peers-*.jar | grep -v original | head -1)
. benchmarks/overhead-common.sh

PIDS=()
cleanup() { [ "${#PIDS[@]}" -eq 0 ] || kill "${PIDS[@]}" 2> /dev/null || true; }
trap cleanup EXIT
USED_PORTS=" "
# free_port: a port nothing listens on, not handed out before by this script.
free_port() {
  local port
  while :; do
    port=$((20000 + RANDOM % 40000))
    [[ $USED_PORTS == *" $port "* ]] && continue
    (exec 3<> "/dev/tcp/127.0.0.1/$port") 2> /dev/null && continue
    USED_PORTS+="$port "
    echo "$port"
    return 0
  done
}

REDIS_PORT=$(free_port)
"${LOAD_PIN[@]}" redis-server --port "$REDIS_PORT" --save '' --appendonly no --daemonize no \
  > /tmp/peers-redis.log 2>&1 &
PIDS+=($!)
for _ in $(seq 1 50); do redis-cli -p "$REDIS_PORT" ping > /dev/null 2>&1 && break; sleep 0.1; done
redis-cli -p "$REDIS_PORT" ping > /dev/null

# start_app <profile> <port> <log> [arguments...]: the app on the server's CPU, in the background; sets STARTED_PID.
start_app() {
  local profile=$1 port=$2 log=$3
  shift 3
  # shellcheck disable=SC2086 # JAVA_OPTS is a list of options
  "${APP_PIN[@]}" java ${JAVA_OPTS:-} -jar "$JAR" --spring.profiles.active="$profile" --server.port="$port" \
    --spring.data.redis.host=127.0.0.1 --spring.data.redis.port="$REDIS_PORT" "$@" > "$log" 2>&1 &
  STARTED_PID=$!
  PIDS+=("$STARTED_PID")
}
# cpu_ticks <pid>: utime + stime of the process, in clock ticks (fields 14 and 15 of /proc/<pid>/stat).
cpu_ticks() {
  sed 's/^.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'
}
CLK_TCK=$(getconf CLK_TCK)
# run_wrk <out file> <connections> <seconds> <url> <client address, or many>: wrk on the load generator's CPUs; one
# client in X-Forwarded-For, or 10,000 in turn.
run_wrk() {
  local out=$1 connections=$2 seconds=$3 url=$4 client=$5
  if [ "$client" = many ]; then
    "${LOAD_PIN[@]}" wrk -t1 -c"$connections" -d"${seconds}s" -s "$MANY_SCRIPT" "$url" > "$out" 2>&1
  else
    "${LOAD_PIN[@]}" wrk -t1 -c"$connections" -d"${seconds}s" -H "X-Forwarded-For: $client" "$url" > "$out" 2>&1
  fi
}
# wrk_field <wrk output> <requests|rps|non2xx|errors>
wrk_field() {
  case $2 in
    requests) awk '/requests in/ { print $1; found = 1 } END { if (!found) print 0 }' "$1" ;;
    rps) awk '/^Requests\/sec:/ { print $2; found = 1 } END { if (!found) print 0 }' "$1" ;;
    non2xx) awk '/Non-2xx or 3xx responses:/ { print $NF; found = 1 } END { if (!found) print 0 }' "$1" ;;
    errors) awk '/Socket errors:/ { gsub(",", ""); print $4 + $6 + $8 + $10; found = 1 } END { if (!found) print 0 }' "$1" ;;
  esac
}
# stats: "median min max" of the numbers on standard input, one a line.
stats() {
  sort -g | awk '{ v[NR] = $1 } END {
    if (NR == 0) { print "- - -"; exit }
    m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
    print m, v[1], v[NR] }'
}

if [ -z "${EXACTNESS:-}" ]; then
  # One process per profile and arguments, all started before any is waited for.
  declare -A PROC_PID PROC_PORT
  for name in $CONFIGS; do
    key="$(config_field "$name" 2)|$(config_field "$name" 4)"
    [ -n "${PROC_PID[$key]:-}" ] && continue
    port=$(free_port)
    # shellcheck disable=SC2046 # the extra arguments are words
    start_app "$(config_field "$name" 2)" "$port" "/tmp/peers-$(config_field "$name" 2).log" $(config_field "$name" 4)
    PROC_PID[$key]=$STARTED_PID
    PROC_PORT[$key]=$port
  done
  declare -A URL PID
  for name in $CONFIGS; do
    key="$(config_field "$name" 2)|$(config_field "$name" 4)"
    URL[$name]="http://127.0.0.1:${PROC_PORT[$key]}$(config_field "$name" 3)"
    PID[$name]=${PROC_PID[$key]}
    wait_for "http://127.0.0.1:${PROC_PORT[$key]}/unlimited" "${PID[$name]}"
    # The limiter must be on the path: its own response header says so (ours RateLimit-*, Bucket4j X-Rate-Limit-*).
    headers=$(curl -fsS -D - -o /dev/null -H "X-Forwarded-For: $HOT_CLIENT" "${URL[$name]}" | tr -d '\r')
    case $(config_field "$name" 3) in
      /ours) grep -qi '^RateLimit-Limit:' <<< "$headers" || { echo "$name: no RateLimit-Limit header" >&2; exit 1; } ;;
      /peer) grep -qi '^X-Rate-Limit-Remaining:' <<< "$headers" \
        || { echo "$name: no X-Rate-Limit-Remaining header: Bucket4j's filter is not on /peer" >&2; exit 1; } ;;
    esac
    echo "$name: ${URL[$name]} (pid ${PID[$name]})"
  done

  OUT=$(mktemp /tmp/peers-wrk.XXXXXX)
  for name in $CONFIGS; do
    echo "warming up $name (${WARMUP_SECONDS}s)"
    half=$(( (WARMUP_SECONDS + 1) / 2 ))
    run_wrk "$OUT" 16 "$half" "${URL[$name]}" "$HOT_CLIENT"
    run_wrk "$OUT" 16 "$half" "${URL[$name]}" many
  done

  CSV=${RESULTS:-$(mktemp /tmp/peers-results.XXXXXX.csv)}
  echo "round,scenario,config,url,seconds,requests,requests_per_second,non_2xx,socket_errors,cpu_seconds,cpu_us_per_request" > "$CSV"
  read -ra ORDER <<< "$CONFIGS"
  for round in $(seq 1 "$ROUNDS"); do
    shift_by=$(( (round - 1) % ${#ORDER[@]} ))
    rotated=("${ORDER[@]:shift_by}" "${ORDER[@]:0:shift_by}")
    for scenario in hot many; do
      for name in "${rotated[@]}"; do
        pid=${PID[$name]}
        before=$(cpu_ticks "$pid")
        run_wrk "$OUT" 16 "$SECONDS_PER_RUN" "${URL[$name]}" "$([ "$scenario" = hot ] && echo "$HOT_CLIENT" || echo many)"
        after=$(cpu_ticks "$pid")
        requests=$(wrk_field "$OUT" requests) rps=$(wrk_field "$OUT" rps)
        non2xx=$(wrk_field "$OUT" non2xx) errors=$(wrk_field "$OUT" errors)
        read -r cpu per_request <<< "$(awk -v t=$((after - before)) -v hz="$CLK_TCK" -v n="$requests" \
          'BEGIN { s = t / hz; printf "%.2f %.1f\n", s, (n > 0 ? s * 1e6 / n : 0) }')"
        echo "$round,$scenario,$name,${URL[$name]},$SECONDS_PER_RUN,$requests,$rps,$non2xx,$errors,$cpu,$per_request" >> "$CSV"
        printf 'round %s %-4s %-18s %10s req/s %8s us CPU/req\n' "$round" "$scenario" "$name" "$rps" "$per_request"
        if [ "$non2xx" != 0 ] || [ "$requests" = 0 ]; then
          echo "FAILED: $name ($scenario) answered $non2xx non-2xx responses of $requests; wrk said:" >&2
          cat "$OUT" >&2
          exit 1
        fi
        [ "$errors" = 0 ] || echo "warning: $name ($scenario): $errors socket errors" >&2
      done
    done
  done

  echo
  echo "$ROUNDS round(s) of ${SECONDS_PER_RUN}s per configuration and scenario, wrk -t1 -c16; every run in $CSV"
  for scenario in hot many; do
    echo
    [ "$scenario" = hot ] && echo "== hot: one client ($HOT_CLIENT)" || echo "== many: 10,000 clients in turn"
    printf '%-18s %8s %17s %7s %13s %11s %13s\n' configuration "req/s" "min..max" "ratio" "min..max" "CPU us/req" "min..max"
    for name in $CONFIGS; do
      read -r rps_median rps_min rps_max <<< "$(awk -F, -v s="$scenario" -v c="$name" \
        '$2 == s && $3 == c { print $7 }' "$CSV" | stats)"
      read -r cpu_median cpu_min cpu_max <<< "$(awk -F, -v s="$scenario" -v c="$name" \
        '$2 == s && $3 == c { print $11 }' "$CSV" | stats)"
      read -r ratio_median ratio_min ratio_max <<< "$(awk -F, -v s="$scenario" -v c="$name" '
        NR > 1 && $2 == s && $3 == "unlimited" { base[$1] = $7 }
        NR > 1 && $2 == s && $3 == c { rps[$1] = $7 }
        END { for (r in rps) if (base[r] > 0) printf "%.3f\n", rps[r] / base[r] }' "$CSV" | stats)"
      printf '%-18s %8.0f %8.0f..%-7.0f %7s %6s..%-5s %11.0f %6.0f..%-5.0f\n' "$name" "$rps_median" "$rps_min" \
        "$rps_max" "$ratio_median" "$ratio_min" "$ratio_max" "$cpu_median" "$cpu_min" "$cpu_max"
    done
  done
  rm -f "$OUT"
  exit 0
fi

# Exactness: two instances of a configuration on one Redis, one client, a limit of EXACT_LIMIT a minute.
TIMEOUT=${EXACTNESS_TIMEOUT:-5s}
EXACT_SECONDS=${EXACTNESS_SECONDS:-3}
EXACT_WARMUP=${EXACTNESS_WARMUP_SECONDS:-5}
# limit_args <name>: the arguments that set the limit to EXACT_LIMIT a minute.
limit_args() {
  case $(config_field "$1" 3) in
    /ours) echo "--ratelimit.policies.hot.limit=$EXACT_LIMIT --ratelimit.policies.hot.window=1m --ratelimit.redis.timeout=$TIMEOUT" ;;
    /peer) echo "--bench.bucket4j.capacity=$EXACT_LIMIT --bench.bucket4j.time=1 --bench.bucket4j.unit=minutes --bench.bucket4j.refill-speed=interval" ;;
    *) echo "$1 has no limit to measure" >&2; return 1 ;;
  esac
}
# away_from_minute_edge <seconds>: waits, if needed, until a run of that long ends inside the current minute.
away_from_minute_edge() {
  local second=$(( $(date +%s) % 60 ))
  if [ $((second + $1 + 2)) -ge 60 ]; then sleep $((61 - second)); fi
}
# admitted <port> <endpoint>: the requests the endpoint has served, counted by the application itself.
admitted() {
  curl -fsS "http://127.0.0.1:$1/admitted/${2#/}"
}
# settled_admitted <port> <endpoint>: the same once it stops changing (responses in flight when wrk stopped).
settled_admitted() {
  local last now
  last=$(admitted "$1" "$2")
  while sleep 0.5; now=$(admitted "$1" "$2"); [ "$now" != "$last" ]; do last=$now; done
  echo "$now"
}
OUT1=$(mktemp /tmp/peers-wrk.XXXXXX) OUT2=$(mktemp /tmp/peers-wrk.XXXXXX)
SUMMARY=()
for name in $EXACT_CONFIGS; do
  profile=$(config_field "$name" 2) endpoint=$(config_field "$name" 3)
  ports=("$(free_port)" "$(free_port)")
  pids=()
  for i in 0 1; do
    # shellcheck disable=SC2046 # the arguments are words
    start_app "$profile" "${ports[i]}" "/tmp/peers-exact-$name-$((i + 1)).log" $(config_field "$name" 4) $(limit_args "$name")
    pids+=("$STARTED_PID")
  done
  for i in 0 1; do wait_for "http://127.0.0.1:${ports[i]}/unlimited" "${pids[i]}"; done
  # Warm-up: 10,000 clients in turn, none of them near the limit.
  echo "warming up two instances of $name (${EXACT_WARMUP}s)"
  run_wrk "$OUT1" 16 "$EXACT_WARMUP" "http://127.0.0.1:${ports[0]}$endpoint" many &
  warm_first=$!
  run_wrk "$OUT2" 16 "$EXACT_WARMUP" "http://127.0.0.1:${ports[1]}$endpoint" many &
  wait "$warm_first" $!
  results=()
  for repeat in $(seq 1 "$EXACTNESS_REPEATS"); do
    client="198.51.100.$repeat"
    redis-cli -p "$REDIS_PORT" flushall > /dev/null
    away_from_minute_edge "$EXACT_SECONDS"
    before=$(( $(admitted "${ports[0]}" "$endpoint") + $(admitted "${ports[1]}" "$endpoint") ))
    run_wrk "$OUT1" 32 "$EXACT_SECONDS" "http://127.0.0.1:${ports[0]}$endpoint" "$client" &
    wrk_first=$!
    run_wrk "$OUT2" 32 "$EXACT_SECONDS" "http://127.0.0.1:${ports[1]}$endpoint" "$client" &
    wait "$wrk_first" $!
    after=$(( $(settled_admitted "${ports[0]}" "$endpoint") + $(settled_admitted "${ports[1]}" "$endpoint") ))
    count=$((after - before))
    sent=0 rejected=0 errors=0
    for out in "$OUT1" "$OUT2"; do
      sent=$((sent + $(wrk_field "$out" requests))) rejected=$((rejected + $(wrk_field "$out" non2xx)))
      errors=$((errors + $(wrk_field "$out" errors)))
    done
    printf '%-18s repeat %s: %5d admitted, %6d responses (%d non-2xx), %d socket errors; limit %d\n' "$name" \
      "$repeat" "$count" "$sent" "$rejected" "$errors" "$EXACT_LIMIT"
    if [ "$rejected" -eq 0 ]; then
      echo "warning: $name rejected nothing in ${EXACT_SECONDS}s: the limit was not reached" >&2
      results+=("$count*")
    else
      results+=("$count")
    fi
  done
  max=$(printf '%s\n' "${results[@]}" | grep -v '\*' | sort -n | tail -1 || true)
  warnings=$(cat "/tmp/peers-exact-$name-1.log" "/tmp/peers-exact-$name-2.log" | grep -c -E ' (WARN|ERROR) ' || true)
  SUMMARY+=("$(printf '%-18s %-24s %6d %10s %10s' "$name" "${results[*]}" "$EXACT_LIMIT" \
    "${max:+$((max - EXACT_LIMIT))}" "$warnings")")
  kill "${pids[@]}" 2> /dev/null || true
  wait "${pids[@]}" 2> /dev/null || true
done
echo
echo "== Exactness: two instances on one Redis, wrk -t1 -c32 -d${EXACT_SECONDS}s on each at once, one client," \
  "limit $EXACT_LIMIT a minute"
echo "   admitted: requests the endpoint served (counted by the app), both instances, per repeat"
echo "   ours: fixed window, ratelimit.redis.timeout=$TIMEOUT; Bucket4j: capacity $EXACT_LIMIT a minute, refill-speed interval"
printf '%-18s %-24s %6s %10s %10s\n' configuration "admitted per repeat" limit "max over" "WARN/ERROR"
printf '%s\n' "${SUMMARY[@]}"
echo "   * nothing was rejected in that repeat: the limit was not reached, and it does not count in 'max over'"
rm -f "$OUT1" "$OUT2"
