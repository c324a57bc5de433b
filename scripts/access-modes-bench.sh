#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The disk access modes (commitlog_disk_access_mode) against the raw disk, for
# docs/performance.md. Every table is one `commitlog bench --repeat 3` run:
# the engines of each load run back to back, forward then backward, and each
# row is the median of the three by ops/s.
#
#   small   100 B, batch/group:2ms/adaptive x mmap/standard/direct at 1, 16
#           and 256 threads and 2x5000 fibers, beside raw (fallocated,
#           fdatasync), raw-overwrite (pre-written, fdatasync) and
#           raw-direct (pre-written, O_DIRECT+O_DSYNC)
#   lz4     the same loads with kv payloads, LZ4 on standard and direct
#   large   1 MiB and 4 MiB at 1..16 threads, the direct route on and off,
#           every mode against raw-direct (MB/s, as in Apache Ozone's comparison)
#   raw     the disk alone: fallocated against pre-written files, and
#           fdatasync against O_DSYNC after O_DIRECT writes, 100 B to 1 MiB
#   ab      the write path alone, for comparing two builds (COMMITLOG_B):
#           batch and adaptive, 100 B, at 1, 16 and 256 threads and 2x5000 fibers
#
# usage: scripts/access-modes-bench.sh [OUT_DIR] [TABLE...]
#   OUT_DIR (default access-modes-results) gets TABLE.csv, TABLE.log (the
#   progress lines, every round) and TABLE.md (scripts/access-modes-tables.py).
#   COMMITLOG=path/to/commitlog picks the binary (default build/bin/commitlog);
#   COMMITLOG_B=path/to/other/commitlog also runs every table with that one,
#   alternating A, B, A, B, A, B with --repeat 1, into TABLE-a*/TABLE-b* files
#   (e.g. two builds that make direct writes durable in the two ways).
#   BENCH_DIR=DIR puts the points' files there (default: under /tmp); it must be
#   on the disk measured, not on tmpfs.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
bin=${COMMITLOG:-build/bin/commitlog}
out=${1:-access-modes-results}
shift || true
tables=("$@")
[[ ${#tables[@]} -gt 0 ]] || tables=(small lz4 large raw)
mkdir -p "$out"
dir_args=()
[[ -n ${BENCH_DIR:-} ]] && dir_args=(--dir "$BENCH_DIR")

modes=mmap,standard,direct
raws=raw,raw-overwrite,raw-direct

table_args() {
  case $1 in
    small) echo "--engines commitlog,$raws --policies batch,group:2ms,adaptive --access-modes $modes" \
                "--sizes 100 --producers 1,16,256,2x5000" ;;
    lz4) echo "--engines commitlog,$raws --policies batch,adaptive --access-modes standard,direct" \
              "--compression lz4 --payload kv --sizes 100 --producers 1,16,256,2x5000" ;;
    large) echo "--engines commitlog,raw-direct --policies batch --access-modes $modes" \
                "--large-path pooled,direct --sizes 1MiB,4MiB --producers 1,2,4,8,16" ;;
    raw) echo "--engines $raws,raw-direct-fdatasync --sizes 100,4KiB,1MiB --producers 1,4,16" ;;
    ab) echo "--engines commitlog --policies batch,adaptive --sizes 100 --producers 1,16,256,2x5000" ;;
    *) echo "unknown table '$1' (small, lz4, large, raw, ab)" >&2; return 2 ;;
  esac
}

run() {  # binary, table, output stem, repeat
  local args
  args=$(table_args "$2")
  # shellcheck disable=SC2086
  "$1" bench $args --repeat "$4" --duration 2s --warmup 0.5s "${dir_args[@]}" \
    --format csv --out "$3.csv" 2> "$3.log" > /dev/null
}

for table in "${tables[@]}"; do
  table_args "$table" > /dev/null
  if [[ -z ${COMMITLOG_B:-} ]]; then
    echo "== $table" >&2
    run "$bin" "$table" "$out/$table" 3
    python3 "$here/access-modes-tables.py" "$out/$table.csv" > "$out/$table.md"
  else
    for round in 1 2 3; do
      echo "== $table, round $round of 3: A, then B" >&2
      run "$bin" "$table" "$out/$table-a$round" 1
      run "$COMMITLOG_B" "$table" "$out/$table-b$round" 1
    done
    python3 "$here/access-modes-tables.py" --ab "$out/$table"-a?.csv -- "$out/$table"-b?.csv \
      > "$out/$table.md"
  fi
done
echo "wrote $out" >&2
