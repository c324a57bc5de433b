#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The crash test of commitlog-kv (docs/kv.md): start the server, put it under
# a write load of WRITERS unmodified redis-cli processes, kill -9 it after a
# random delay, restart it on the same directory, and check with redis-cli
# that every SET that was answered +OK reads back its value. Repeat CYCLES
# times per policy, in one directory per policy (so later cycles replay on
# top of the RocksDB flushes and log discards of the earlier ones).
#
#   scripts/kv-crash.sh [CYCLES] [POLICY...]     defaults: 5, batch group adaptive
#
# Each writer is `redis-cli -p PORT` reading "SET crash:<cycle>:<w>:<i> v<i>"
# lines, i = 1, 2, ...: it sends one, waits for the reply, prints it, and
# only then sends the next. The +OK replies go to stdout and the errors
# (after the kill) to stderr, so the writer's acknowledged SETs are exactly
# the first <number of OK lines> of its stream.
#
# Policy periodic acknowledges before durability and may lose up to about a
# marker interval of +OK at a kill (Cassandra's semantics); it is reported but
# never fails the run.
#
# Exit 0 when no acknowledged SET was lost, 1 otherwise, 2 on a usage error.
#
# Environment (defaults in brackets):
#   KV              the server [build/bin/commitlog-kv under the repository]
#   REDIS_CLI       [redis-cli]
#   WRITERS         concurrent redis-cli writers [8]
#   MIN_DELAY_MS, MAX_DELAY_MS   kill delay after the load starts [300, 1500]
#   WINDOW_MS       group window [2]
#   MEMTABLE        RocksDB memtable size, small so that kills land in flushes [256kb]
#   WORK            working directory [a fresh mktemp -d, removed on success]
set -euo pipefail

cycles=${1:-5}
shift || true
policies=("$@")
((${#policies[@]})) || policies=(batch group adaptive)
[[ $cycles =~ ^[0-9]+$ ]] || { echo "usage: $0 [CYCLES] [POLICY...]" >&2; exit 2; }

root=$(cd "$(dirname "$0")/.." && pwd)
kv=${KV:-$root/build/bin/commitlog-kv}
cli=${REDIS_CLI:-redis-cli}
writers=${WRITERS:-8}
min_delay=${MIN_DELAY_MS:-300} max_delay=${MAX_DELAY_MS:-1500}
window=${WINDOW_MS:-2}
memtable=${MEMTABLE:-256kb}
[[ -x $kv ]] || { echo "$0: $kv is not executable; build it or set KV" >&2; exit 2; }
command -v "$cli" > /dev/null || { echo "$0: $cli not found (Debian package redis-tools)" >&2; exit 2; }
work=${WORK:-$(mktemp -d "${TMPDIR:-/tmp}/kv-crash.XXXXXX")}
mkdir -p "$work"

server_pid=
cleanup() { if [[ -n $server_pid ]]; then kill -9 "$server_pid" 2> /dev/null || true; fi; }
trap cleanup EXIT

# start_server DIR CONFIG LOG: starts commitlog-kv on a free port; sets
# server_pid and port.
start_server() {
  "$kv" --dir "$1" --config "$2" --port 0 --memtable-size "$memtable" > "$3" 2>&1 &
  server_pid=$!
  for _ in $(seq 1 500); do
    port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$3")
    [[ -n $port ]] && return 0
    kill -0 "$server_pid" 2> /dev/null || { echo "server failed to start:"; cat "$3"; exit 1; }
    sleep 0.02
  done
  echo "server did not listen:"; cat "$3"; exit 1
}

failed=0
summary=()
for policy in "${policies[@]}"; do
  pdir=$work/$policy
  mkdir -p "$pdir"
  config=$pdir/commitlog.yaml
  {
    echo "commitlog_sync: $policy"
    [[ $policy == group ]] && echo "commitlog_sync_group_window: ${window}ms"
    [[ $policy == periodic ]] && echo "commitlog_sync_period: 100ms"
  } > "$config"
  total_acked=0 total_lost=0
  for cycle in $(seq 1 "$cycles"); do
    start_server "$pdir/data" "$config" "$pdir/server-$cycle.log"
    stop=$pdir/stop-$cycle
    for w in $(seq 1 "$writers"); do
      awk -v stop="$stop" -v prefix="crash:$cycle:$w:" \
        'BEGIN { for (i = 1; ; i++) { print "SET " prefix i " v" i; if (i % 64 == 0 && (getline line < stop) > 0) exit } }' |
        "$cli" -p "$port" > "$pdir/acks-$cycle-$w" 2> /dev/null &
    done
    delay=$((min_delay + RANDOM % (max_delay - min_delay + 1)))
    sleep "$(awk -v ms="$delay" 'BEGIN { printf "%.3f", ms / 1000 }')"
    kill -9 "$server_pid"
    wait "$server_pid" 2> /dev/null || true
    echo stop > "$stop"
    wait  # the writers: their generators see the stop file, redis-cli its EOF

    start_server "$pdir/data" "$config" "$pdir/restart-$cycle.log"
    acked=0 lost=0
    for w in $(seq 1 "$writers"); do
      n=$(grep -c '^OK$' "$pdir/acks-$cycle-$w" || true)
      ((n > 0)) || continue
      acked=$((acked + n))
      awk -v n="$n" -v prefix="crash:$cycle:$w:" 'BEGIN { for (i = 1; i <= n; i++) print "GET " prefix i }' |
        "$cli" -p "$port" > "$pdir/reads-$cycle-$w"
      bad=$(awk '{ if ($0 != "v" NR) bad++ } END { print bad + 0 + (NR < n ? n - NR : 0) }' n="$n" "$pdir/reads-$cycle-$w")
      lost=$((lost + bad))
    done
    replayed=$(grep -o 'replayed [0-9]* mutations from [0-9]* segments in [0-9.]* ms' "$pdir/restart-$cycle.log" || true)
    checkpoint=$(grep -o "after RocksDB's checkpoint [^ ]*" "$pdir/restart-$cycle.log" || true)
    echo "$policy cycle $cycle: killed after ${delay} ms; $acked SETs acknowledged, $lost lost;" \
      "restart: $replayed ${checkpoint}"
    kill -TERM "$server_pid"
    wait "$server_pid" 2> /dev/null || true
    server_pid=
    total_acked=$((total_acked + acked)) total_lost=$((total_lost + lost))
  done
  summary+=("$policy: $cycles kills, $total_acked acknowledged SETs, $total_lost lost")
  if [[ $policy != periodic ]] && ((total_lost > 0)); then failed=1; fi
done

printf '%s\n' "${summary[@]}"
if ((failed)); then
  echo "FAIL: acknowledged SETs were lost (logs in $work)"
  exit 1
fi
echo "PASS: no acknowledged SET lost"
[[ -n ${WORK:-} ]] || rm -rf "$work"
