#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The log stays bounded under commitlog-kv: GIB GiB of SETs (redis-benchmark,
# 1 KiB values, random keys) with commitlog_total_space at LIMIT; the log
# asks RocksDB to flush, and each flush discards the log up to it. The size
# of the log's segments is sampled all along; then the server is killed
# with kill -9, restarted, and its key count and key digest compared.
#
#   scripts/kv-space.sh [GIB]        [1]
#
# Environment: KV [build/bin/commitlog-kv], LIMIT [64MiB], SEGMENT [32MiB],
# CLIENTS [64], WORK [mktemp -d]. Exit 1 when the log passed LIMIT plus one
# segment or a key differs after the restart.
set -euo pipefail
gib=${1:-1}
root=$(cd "$(dirname "$0")/.." && pwd)
kv=${KV:-$root/build/bin/commitlog-kv}
limit=${LIMIT:-64MiB} segment=${SEGMENT:-32MiB} clients=${CLIENTS:-64}
work=${WORK:-$(mktemp -d "${TMPDIR:-/tmp}/kv-space.XXXXXX")}
mkdir -p "$work"
bytes() { numfmt --from=iec-i --suffix=B "$1" | sed 's/B$//'; }
bound=$(($(bytes "$limit") + $(bytes "$segment")))
printf 'commitlog_sync: adaptive\ncommitlog_segment_size: %s\ncommitlog_total_space: %s\n' "$segment" "$limit" > "$work/commitlog.yaml"
pid=
cleanup() { [[ -z $pid ]] || kill -9 "$pid" 2> /dev/null || true; }
trap cleanup EXIT
start() {
  "$kv" --dir "$work/data" --config "$work/commitlog.yaml" --port 0 > "$work/$1" 2>&1 &
  pid=$!
  for _ in $(seq 1 3000); do
    port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$work/$1")
    [[ -n $port ]] && return 0
    sleep 0.01
  done
  echo "commitlog-kv did not start" >&2; cat "$work/$1" >&2; exit 1
}
start server.out
requests=$((gib * 1024 * 1024))
redis-benchmark -p "$port" -t set -n "$requests" -d 1024 -r 100000000 -c "$clients" -q > "$work/bench.out" 2>&1 &
bench=$!
most=0
while kill -0 "$bench" 2> /dev/null; do
  size=$(find "$work/data/commitlog" -name '*.log' -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }')
  ((size > most)) && most=$size
  sleep 0.1
done
wait "$bench"
keys=$(redis-cli -p "$port" dbsize)
digest=$(redis-cli -p "$port" --scan | sort | md5sum | cut -d' ' -f1)
flushes=$(redis-cli -p "$port" info persistence | tr -d '\r' | sed -n 's/^kv_rocksdb_flushes://p')
discards=$(redis-cli -p "$port" info persistence | tr -d '\r' | sed -n 's/^kv_log_discards://p')
kill -9 "$pid"; wait "$pid" 2> /dev/null || true; pid=
start restart.out
keys2=$(redis-cli -p "$port" dbsize)
digest2=$(redis-cli -p "$port" --scan | sort | md5sum | cut -d' ' -f1)
kill -TERM "$pid"; wait "$pid" 2> /dev/null || true; pid=
rate=$(tr '\r' '\n' < "$work/bench.out" | sed -n 's/^SET: \([0-9.]*\) requests.*/\1/p' | tail -1)
echo "$gib GiB of SETs (1 KiB values, $clients clients, ${rate:-?} SET/s): the log's segments peaked at $((most >> 20)) MiB" \
  "(limit $limit + one segment of $segment = $((bound >> 20)) MiB); $flushes RocksDB flushes, $discards discards"
echo "after kill -9 and restart: $keys2 keys (before: $keys), key digest $( [[ $digest == "$digest2" ]] && echo same || echo DIFFERENT);" \
  "$(grep -o 'replayed [0-9]* mutations from [0-9]* segments in [0-9.]* ms' "$work/restart.out")"
((most <= bound)) && [[ $keys == "$keys2" && $digest == "$digest2" ]] || { echo "FAIL (files in $work)"; exit 1; }
[[ -n ${WORK:-} ]] || rm -rf "$work"
echo PASS
