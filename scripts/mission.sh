#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What the commit log is for, shown in a few seconds: commitlog-kv (a Redis-
# protocol server that keeps its data in RocksDB, with RocksDB's WAL off and
# the commit log as its WAL)
# runs with conf/commitlog.yaml's policy under a write load, is killed with
# kill -9 in the middle of it, and restarts by replaying the log; then every
# SET that had been answered OK is read back. A short report follows.
#
#   scripts/mission.sh [--dir DIR] [--seconds S] [--config FILE]
#
# The load is redis-benchmark (SET, 50 connections, 100-byte values, random
# keys), which measures SET/s but does not say which SETs were answered, so
# beside it run checking writers: each is redis-cli reading the lines
# "SET mission:<w>:<i> v<i>", i = 1, 2, ..., from a pipe; it sends one,
# waits for the answer, prints it and only then sends the next, so that its
# acknowledged SETs are exactly the first <number of OK lines> of its stream.
#
# DIR (default: a new /tmp/commitlog-mission.XXXXXX) must be empty or absent;
# everything goes in it and stays there for a look afterwards:
#   data/         the server's directory (its log in data/commitlog)
#   log-at-kill/  hard links to the segments as the kill left them, but for
#                 the seal the restart writes where it found the crashed run
#                 to end (the server discards its own after RocksDB flushes)
#   *.out         the output of every process started
# Nothing is deleted, and no process started here outlives the script.
#
# Exit 0 when no acknowledged SET was lost, 1 when one was (or a step
# failed), 2 on a usage error.
#
# Environment (defaults in brackets):
#   KV, CLI          commitlog-kv and commitlog [build/bin/ under the repository]
#   REDIS_BENCHMARK, REDIS_CLI   [redis-benchmark, redis-cli]
#   WRITERS          checking writers [4]
#   CLIENTS          redis-benchmark connections [50]
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
kv=${KV:-$root/build/bin/commitlog-kv}
cli=${CLI:-$root/build/bin/commitlog}
benchmark=${REDIS_BENCHMARK:-redis-benchmark}
redis_cli=${REDIS_CLI:-redis-cli}
writers=${WRITERS:-4}
clients=${CLIENTS:-50}
config=$root/conf/commitlog.yaml
seconds=3
dir=

usage() {
  echo "usage: $0 [--dir DIR] [--seconds S] [--config FILE]" >&2
  exit 2
}
while (($#)); do
  case $1 in
    --dir) dir=${2:-} && shift 2 || usage ;;
    --seconds) seconds=${2:-} && shift 2 || usage ;;
    --config) config=${2:-} && shift 2 || usage ;;
    *) usage ;;
  esac
done
[[ $seconds =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "$0: --seconds '$seconds' is not a number of seconds" >&2; exit 2; }
fail_usage() { echo "$0: $*" >&2; exit 2; }
[[ -x $kv ]] || fail_usage "$kv is not executable; build it (cmake --build --preset release) or set KV"
[[ -x $cli ]] || fail_usage "$cli is not executable; build it or set CLI"
[[ -f $config ]] || fail_usage "--config $config: no such file"
for tool in "$benchmark" "$redis_cli"; do
  command -v "$tool" > /dev/null || fail_usage "$tool not found (Debian package redis-tools; cmake/install-deps.sh installs it)"
done
if [[ -z $dir ]]; then
  dir=$(mktemp -d "${TMPDIR:-/tmp}/commitlog-mission.XXXXXX")
elif [[ -e $dir ]]; then
  [[ -d $dir ]] || fail_usage "--dir $dir is not a directory"
  [[ -z $(ls -A "$dir") ]] || fail_usage "--dir $dir is not empty; give a new or empty directory"
else
  mkdir -p "$dir"
fi
dir=$(cd "$dir" && pwd)
kv=$(cd "$(dirname "$kv")" && pwd)/$(basename "$kv")
config=$(cd "$(dirname "$config")" && pwd)/$(basename "$config")
config=${config#"$root"/}

pids=()  # every process started here that may still run
server_pid=
cleanup() {
  local pid
  for pid in "${pids[@]}" $server_pid; do kill -9 "$pid" 2> /dev/null || true; done
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# start_server OUT: starts commitlog-kv on a free port; sets server_pid,
# port and start_line. It runs in the repository, so that its start line
# names the config as conf/commitlog.yaml.
start_server() {
  (cd "$root" && exec "$kv" --config "$config" --dir "$dir/data" --port 0) > "$dir/$1" 2>&1 &
  server_pid=$!
  for _ in $(seq 1 1000); do
    start_line=$(grep -m1 'listening on 127\.0\.0\.1:' "$dir/$1" || true)
    if [[ -n $start_line ]]; then
      port=$(sed 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/' <<< "$start_line")
      return 0
    fi
    kill -0 "$server_pid" 2> /dev/null || { echo "commitlog-kv failed to start:" >&2; cat "$dir/$1" >&2; exit 1; }
    sleep 0.01
  done
  echo "commitlog-kv did not listen within 10 s:" >&2
  cat "$dir/$1" >&2
  exit 1
}

# wait_or_kill PID...: waits up to 10 s for each, then kill -9's what is left.
wait_or_kill() {
  local pid
  for pid in "$@"; do
    for _ in $(seq 1 1000); do
      kill -0 "$pid" 2> /dev/null || break
      sleep 0.01
    done
    kill -9 "$pid" 2> /dev/null || true
    wait "$pid" 2> /dev/null || true
  done
}

stop_server() {
  kill -TERM "$server_pid"
  wait_or_kill "$server_pid"
  server_pid=
}

# 1. The server, the load, and the checking writers.
start_server server.out
policy=$(sed -n 's/.*commitlog_sync \([^ ]*\) (\([^)]*\)).*/\1 (\2)/p' <<< "$start_line")
engine=$(sed -n 's/.*engine \([^ ]*\) in \([^ ]*\) .*/\1 in \2/p' <<< "$start_line")
"$benchmark" -h 127.0.0.1 -p "$port" -t set -l -q -c "$clients" -d 100 -r 1000000 \
  > "$dir/redis-benchmark.out" 2>&1 &
pids+=($!)
for w in $(seq 1 "$writers"); do
  awk -v stop="$dir/stop" -v prefix="mission:$w:" \
    'BEGIN { for (i = 1; ; i++) { print "SET " prefix i " v" i; if (i % 64 == 0 && (getline line < stop) > 0) exit } }' |
    "$redis_cli" -h 127.0.0.1 -p "$port" > "$dir/writer-$w.out" 2> /dev/null &
  pids+=($!)
done

# 2. kill -9 in the middle of it: $seconds after the first answered SET (on a
# busy disk the first flushes can take a while), or after 10 s without one.
for _ in $(seq 1 1000); do
  grep -qx OK "$dir"/writer-*.out 2> /dev/null && break
  sleep 0.01
done
sleep "$seconds"
kill -9 "$server_pid"
wait "$server_pid" 2> /dev/null || true
server_pid=
echo stop > "$dir/stop"
wait_or_kill "${pids[@]}"
pids=()
mkdir "$dir/log-at-kill"
ln "$dir"/data/commitlog/CommitLog-*.log "$dir/log-at-kill/"

# redis-benchmark -l -q redraws "SET: rps=R (overall: O) avg_msec=..." in place.
set_per_s=$(tr '\r' '\n' < "$dir/redis-benchmark.out" | sed -n 's/.*rps=[0-9.]* (overall: \([0-9]*\).*/\1/p' | tail -1)
acked=()
total_acked=0
for w in $(seq 1 "$writers"); do
  acked[w]=$(grep -c '^OK$' "$dir/writer-$w.out" || true)
  total_acked=$((total_acked + acked[w]))
done

# 3. Restart: the server replays the log; read back every acknowledged SET,
# and the one each writer had sent without an answer yet.
start_server server-restart.out
replayed=$(grep -o 'replayed [0-9]* mutations from [0-9]* segments in [0-9.]* ms' "$dir/server-restart.out" || true)
checkpoint=$(grep -o "after RocksDB's checkpoint [^ ]*" "$dir/server-restart.out" || true)
recovered=0 lost=0
for w in $(seq 1 "$writers"); do
  n=${acked[w]}
  awk -v n="$n" -v prefix="mission:$w:" 'BEGIN { for (i = 1; i <= n + 1; i++) print "GET " prefix i }' |
    "$redis_cli" -h 127.0.0.1 -p "$port" > "$dir/read-$w.out"
  read -r ok bad < <(awk -v n="$n" '{ if ($0 == "v" NR) ok++; else if (NR <= n) bad++ }
                                    END { print ok + 0, bad + 0 + (NR < n ? n - NR : 0) }' "$dir/read-$w.out")
  recovered=$((recovered + ok)) lost=$((lost + bad))
done
stop_server

# 4. The log as the kill left it.
verify=$("$cli" verify "$dir/log-at-kill" 2>&1 | tail -1 | sed "s|$dir/||g") || true
stat_json=$("$cli" stat --format json "$dir/log-at-kill" 2> /dev/null || true)
# The first "segments" and "entries" of `stat --format json` are its totals.
json_number() { sed -n "s/.*\"$1\": \([0-9]*\).*/\1/p" <<< "$stat_json" | sed -n 1p; }
segments=$(json_number segments)
entries=$(json_number entries)

case ${policy%% *} in
  periodic) promise="a SET is answered before it is durable; the log fsyncs every commitlog_sync_period" ;;
  batch | group | adaptive) promise="a SET is answered once it is durable" ;;
  *) promise="a policy registered by its embedder" ;;
esac
in_flight=$((recovered - total_acked + lost))
# 1234567 -> 1,234,567
commas() {
  local n=$1 out=
  while ((${#n} > 3)); do out=,${n: -3}$out n=${n:0:${#n}-3}; done
  echo "$n$out"
}
show() { printf '  %-13s %s\n' "$1" "$2"; }
echo "commitlog: a Redis-protocol server on RocksDB with the commit log as its WAL, killed with kill -9 under load"
echo
show "engine" "${engine:-?}, its WAL off; the commit log in $dir/data/commitlog is its WAL"
show "policy" "$policy: $promise"
show "load" "redis-benchmark, $clients connections, 100-byte values: $(commas "${set_per_s:-0}") SET/s"
show "kill -9" "after $seconds s of that load, beside $writers writers that check every answer"
show "acknowledged" "$(commas "$total_acked") SETs answered OK to the checking writers"
show "restart" "${replayed:-no replay line in server-restart.out}${checkpoint:+, $checkpoint}"
if ((lost == 0)); then
  show "recovered" "$(commas "$recovered") checked SETs read back their value: every acknowledged one, and $in_flight sent but not yet answered at the kill"
else
  show "recovered" "$(commas "$recovered") checked SETs read back their value"
fi
show "lost" "$lost"
show "the log" "$dir/log-at-kill: $segments segments, $(commas "$entries") entries, as the kill left them (sealed by the restart)"
show "verify" "$verify"
echo
echo "Look at it with:"
echo "  $cli stat $dir/log-at-kill"
echo "  $cli dump $dir/log-at-kill | less"
echo "  $cli replay $dir/log-at-kill | head"
echo "Everything of this run is in $dir (rm -r it when done)."
if ((lost > 0)); then
  echo "$lost acknowledged SETs were lost."
  exit 1
fi
echo "Every acknowledged SET survived the kill."
