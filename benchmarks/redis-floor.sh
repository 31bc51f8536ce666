#!/usr/bin/env bash
# What a rate limit decision costs Redis at the least, against what this library's scripts cost it: redis-benchmark
# sends EVALSHA from 16 clients, one call per decision (no batching), on a redis-server of its own, for
#   - the floor: a script that returns 1 (the round trip and the command's own work, nothing decided);
#   - a minimal fixed window: INCRBY and a PEXPIRE on a key's first unit (what a hand-written script does);
#   - this library's fixed-window script (the per-policy script of a coalesced single-limit decision), one decision
#     a call;
#   - this library's all-or-nothing script, one group of one fixed-window entry a call (several limits, WebFlux, the
#     gateway, refunds and charges go through it);
#   - both again with 8 decisions a call, as the batching layer sends them under load (fixed-8, groups-8).
# Each on one hot key and over 10,000 keys. Prints, per case, the calls a second and the Redis time per decision: the
# time inside the command (INFO commandstats usec_per_call) and the redis-server process's CPU (INFO cpu), which
# includes reading, parsing and replying. ROUNDS (3) rounds, interleaved; the medians with their range.
# About a minute. Needs redis-server, redis-cli and redis-benchmark.
#
#   benchmarks/redis-floor.sh
#   ROUNDS=5 REQUESTS=400000 benchmarks/redis-floor.sh
set -euo pipefail
cd "$(dirname "$0")/.."
for tool in redis-server redis-cli redis-benchmark; do
  command -v "$tool" > /dev/null || { echo "$tool is needed: sudo apt-get install redis-server redis-tools" >&2; exit 1; }
done
ROUNDS=${ROUNDS:-3}
REQUESTS=${REQUESTS:-200000}
SCRIPTS=ratelimit-redis/src/main/resources/io/github/ratelimit/redis

PORT=$((20000 + RANDOM % 40000))
redis-server --port "$PORT" --save '' --appendonly no --daemonize no > /tmp/redis-floor-redis.log 2>&1 &
REDIS_PID=$!
trap 'kill $REDIS_PID 2> /dev/null || true' EXIT
for _ in $(seq 1 50); do redis-cli -p "$PORT" ping > /dev/null 2>&1 && break; sleep 0.1; done
cli() { redis-cli -p "$PORT" "$@"; }

FLOOR=$(cli SCRIPT LOAD "return 1")
MINIMAL=$(cli SCRIPT LOAD "local c = redis.call('INCRBY', KEYS[1], ARGV[1])
if c == tonumber(ARGV[1]) then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return c")
FIXED=$(cat "$SCRIPTS/prelude.lua" "$SCRIPTS/fixed-window.lua" | redis-cli -p "$PORT" -x SCRIPT LOAD)
ALL_OR_NOTHING=$(redis-cli -p "$PORT" -x SCRIPT LOAD < "$SCRIPTS/all-or-nothing.lua")

# The arguments of each script for one decision of 1 unit under 1,000,000,000 a minute (never rejected), on Redis
# TIME: the per-policy script takes now, limit, window, burst, units per token, units per ms, least TTL, then costs;
# the all-or-nothing one takes now, least TTL, then per group its mode and size and 8 arguments per entry.
LIMIT=1000000000
# set_args <key> <case>: the command of one decision, in ARGS ("" is Redis TIME: an empty argument, kept as one).
set_args() {
  case $2 in
    floor) ARGS=(EVALSHA "$FLOOR" 1 "$1") ;;
    minimal) ARGS=(EVALSHA "$MINIMAL" 1 "$1" 1 60000) ;;
    fixed) ARGS=(EVALSHA "$FIXED" 1 "$1" "" "$LIMIT" 60000 "$LIMIT" 1 1 0 1) ;;
    groups) ARGS=(EVALSHA "$ALL_OR_NOTHING" 1 "$1" "" 0 take 1 f "$LIMIT" 60000 "$LIMIT" 1 1 1 0) ;;
    fixed-8) ARGS=(EVALSHA "$FIXED" 8 "$1" "$1" "$1" "$1" "$1" "$1" "$1" "$1" "" "$LIMIT" 60000 "$LIMIT" 1 1 0
      1 1 1 1 1 1 1 1) ;;
    groups-8)
      ARGS=(EVALSHA "$ALL_OR_NOTHING" 8 "$1" "$1" "$1" "$1" "$1" "$1" "$1" "$1" "" 0)
      for _ in 1 2 3 4 5 6 7 8; do ARGS+=(take 1 f "$LIMIT" 60000 "$LIMIT" 1 1 1 0); done ;;
  esac
}

# decisions_per_call <case>
decisions_per_call() { [[ $1 == *-8 ]] && echo 8 || echo 1; }

# run <case> <keys>: one redis-benchmark run; prints decisions a second, and usec in the command and of CPU a decision.
run() {
  # Keys of each case apart: the minimal script's counter is a string, the fixed window's state a hash.
  local key="$1:hot" extra=()
  if [ "$2" = many ]; then key="$1:k:__rand_int__"; extra=(-r 10000); fi
  set_args "$key" "$1"
  cli CONFIG RESETSTAT > /dev/null
  local cpu_before cpu_after
  cpu_before=$(cli INFO cpu | awk -F: '/^used_cpu_(sys|user):/ { s += $2 } END { printf "%.6f", s }')
  local rps
  rps=$(redis-benchmark -p "$PORT" -c 16 -n "$REQUESTS" "${extra[@]}" --csv "${ARGS[@]}" | tail -1 | cut -d, -f2 | tr -d '"')
  cpu_after=$(cli INFO cpu | awk -F: '/^used_cpu_(sys|user):/ { s += $2 } END { printf "%.6f", s }')
  local stats calls usec
  stats=$(cli INFO commandstats | tr -d '\r' | grep '^cmdstat_evalsha:')
  calls=$(sed 's/^cmdstat_evalsha:calls=\([0-9]*\),.*/\1/' <<< "$stats")
  usec=$(sed 's/.*usec_per_call=\([0-9.]*\),.*/\1/' <<< "$stats")
  awk -v r="$rps" -v u="$usec" -v b="$cpu_before" -v a="$cpu_after" -v c="$calls" -v d="$(decisions_per_call "$1")" \
    'BEGIN { printf "%.0f %.2f %.2f\n", r * d, u / d, (a - b) * 1e6 / c / d }'
}

CASES=(floor minimal fixed groups fixed-8 groups-8)
declare -A RESULTS
for round in $(seq 1 "$ROUNDS"); do
  for keys in hot many; do
    for c in "${CASES[@]}"; do
      RESULTS[$c/$keys]+="$(run "$c" "$keys");"
    done
  done
  echo "round $round done" >&2
done

# median_range <values...>: "median (min-max)"
median_range() {
  printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2;
    printf "%g (%g-%g)", m, v[1], v[NR] }'
}

printf '%-9s %-5s %-28s %-26s %-26s\n' case keys decisions/s "usec/decision in command" "CPU usec/decision"
for keys in hot many; do
  for c in "${CASES[@]}"; do
    IFS=';' read -r -a rows <<< "${RESULTS[$c/$keys]}"
    rps=() usec=() cpu=()
    for row in "${rows[@]}"; do
      read -r r u p <<< "$row"
      rps+=("$r") usec+=("$u") cpu+=("$p")
    done
    printf '%-9s %-5s %-28s %-26s %-26s\n' "$c" "$keys" "$(median_range "${rps[@]}")" "$(median_range "${usec[@]}")" \
      "$(median_range "${cpu[@]}")"
  done
done
