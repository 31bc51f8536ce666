#!/usr/bin/env bash
# Where an endpoint of benchmarks-peers spends its CPU under load: one app process (PROFILE, by default ours-redis,
# with APP_ARGS, by default a leased hot policy) on a redis-server of its own, warmed up, then DURATION (30) seconds of
# `wrk -t1 -c16` on one hot client while Java Flight Recorder samples it. Prints the top frames by samples: the
# methods running (TOP, 25) and the stacks' frames of this library, so that two configurations can be told apart.
# Needs wrk, redis-server and redis-cli, and the JDK's jfr. About a minute.
#
#   benchmarks/profile-endpoint.sh                                                  # /ours, on Redis, lease: auto
#   APP_ARGS= benchmarks/profile-endpoint.sh                                        # /ours, on Redis, no lease
#   ENDPOINT=/unlimited APP_ARGS= benchmarks/profile-endpoint.sh                    # the baseline
set -euo pipefail
cd "$(dirname "$0")/.."
export LC_ALL=C
for tool in wrk redis-server redis-cli jfr; do
  command -v "$tool" > /dev/null || { echo "$tool is needed" >&2; exit 1; }
done
PROFILE=${PROFILE:-ours-redis}
ENDPOINT=${ENDPOINT:-/ours}
APP_ARGS=${APP_ARGS---ratelimit.policies.hot.lease=auto}
DURATION=${DURATION:-30}
TOP=${TOP:-25}
${MVN:-mvn} -B -q -pl benchmarks-peers -am -DskipTests package
echo
JAR=$(ls benchmarks-peers/target/benchmarks-peers-*.jar | grep -v original | head -1)
REDIS_PORT=$((20000 + RANDOM % 20000))
APP_PORT=$((REDIS_PORT + 20000))
RECORDING=/tmp/profile-endpoint.jfr
PIDS=()
trap '[ "${#PIDS[@]}" -eq 0 ] || kill "${PIDS[@]}" 2> /dev/null || true' EXIT
redis-server --port "$REDIS_PORT" --save '' --appendonly no --daemonize no > /tmp/profile-endpoint-redis.log 2>&1 &
PIDS+=($!)
for _ in $(seq 1 50); do redis-cli -p "$REDIS_PORT" ping > /dev/null 2>&1 && break; sleep 0.1; done
# shellcheck disable=SC2086 # APP_ARGS is a list of arguments
java -jar "$JAR" --spring.profiles.active="$PROFILE" --server.port="$APP_PORT" --spring.data.redis.host=127.0.0.1 \
  --spring.data.redis.port="$REDIS_PORT" $APP_ARGS > /tmp/profile-endpoint-app.log 2>&1 &
APP_PID=$!
PIDS+=("$APP_PID")
for _ in $(seq 1 120); do curl -fs -o /dev/null "http://127.0.0.1:$APP_PORT/unlimited" && break; sleep 0.5; done
wrk -t1 -c16 -d20s -H "X-Forwarded-For: 203.0.113.7" "http://127.0.0.1:$APP_PORT$ENDPOINT" > /dev/null
jcmd "$APP_PID" JFR.start name=profile settings=profile filename="$RECORDING" > /dev/null
wrk -t1 -c16 -d"${DURATION}s" -H "X-Forwarded-For: 203.0.113.7" "http://127.0.0.1:$APP_PORT$ENDPOINT" \
  | grep -E "Requests/sec|Non-2xx" || true
jcmd "$APP_PID" JFR.stop name=profile > /dev/null
echo "Redis script calls: $(redis-cli -p "$REDIS_PORT" INFO commandstats | grep -o 'cmdstat_evalsha:calls=[0-9]*' || echo none)"
echo
echo "Top $TOP methods running, by samples:"
jfr print --events jdk.ExecutionSample "$RECORDING" \
  | awk '/stackTrace = \[/ { getline; sub(/^[ \t]+/, ""); sub(/line:.*/, ""); print }' \
  | sort | uniq -c | sort -rn | head -"$TOP"
echo
echo "Frames of this library anywhere in the sampled stacks, by samples:"
jfr print --events jdk.ExecutionSample "$RECORDING" \
  | grep -o 'io\.github\.ratelimit\.[A-Za-z0-9_.$]*' | sort | uniq -c | sort -rn | head -"$TOP"
