#!/usr/bin/env bash
# Replay speed against the ceiling of simply reading the same files
# (docs/benchmarks.md, "Replay speed"). Usage:
#   tools/replay_speed.sh [CLI] [WORK_DIR] [COMPRESSIONS] [REPS]
#   CLI           the commitlog binary (default build-tools/bin/commitlog)
#   WORK_DIR      scratch space for a 1 GiB log (default /tmp/commitlog-replay-speed), removed after
#   COMPRESSIONS  "none", "lz4" or "none lz4" (default none)
#   REPS          runs per figure; the best is reported (default 3)
# For each compression it writes a 1 GiB log with 1 KiB text-like payloads
# (`commitlog replay-fixture`), then times, with the page cache warm and with
# the log's pages dropped from it (posix_fadvise DONTNEED through
# `dd iflag=nocache`, no root needed, other files untouched):
#   cat        cat FILES > /dev/null                 (128 KiB reads: the ceiling)
#   dd         dd bs=32M per file > /dev/null        (whole-segment reads, like the replayer)
#   verify     commitlog verify DIR                  (the library's reader: read + checksums)
#   replay     commitlog replay DIR --out /dev/null  (the reader + JSON lines + base64)
set -euo pipefail
CLI=${1:-build-tools/bin/commitlog}
WORK=${2:-/tmp/commitlog-replay-speed}
COMPRESSIONS=${3:-none}
REPS=${4:-3}

seconds() {  # seconds COMMAND...: wall time of one run
  local t0 t1
  t0=$(date +%s%N)
  "$@" > /dev/null 2>&1
  t1=$(date +%s%N)
  echo $(( (t1 - t0) / 1000 ))  # µs
}
drop() { for f in "$WORK"/*.log; do dd if="$f" iflag=nocache count=0 status=none; done; }
warm() { cat "$WORK"/*.log > /dev/null; }
read_cat() { cat "$WORK"/*.log; }
read_dd() { for f in "$WORK"/*.log; do dd if="$f" bs=32M status=none; done; }
verify() { "$CLI" verify "$WORK"; }
replay() { "$CLI" replay "$WORK" --out /dev/null; }

echo "| log | cache | cat (ceiling) | dd bs=32M | verify | replay to /dev/null | replay / cat |"
echo "|---|---|---|---|---|---|---|"
for compression in $COMPRESSIONS; do
  rm -rf "$WORK"
  if ! "$CLI" replay-fixture "$WORK" --bytes $((1 << 30)) --payload 1024 --compression "$compression" > /dev/null; then
    echo "| $compression | - | could not write the log | | | | |"
    continue
  fi
  sync
  bytes=$(cat "$WORK"/*.log | wc -c)
  for cache in warm cold; do
    row="| $compression, $((bytes >> 20)) MiB | $cache |"
    declare -A best=()
    for ((i = 0; i < REPS; i++)); do
      for what in read_cat read_dd verify replay; do
        if [[ $cache == warm ]]; then warm; else drop; fi
        us=$(seconds "$what")
        if [[ -z ${best[$what]:-} || $us -lt ${best[$what]} ]]; then best[$what]=$us; fi
      done
    done
    for what in read_cat read_dd verify replay; do
      us=${best[$what]}
      row+=" $(awk -v b="$bytes" -v us="$us" 'BEGIN { printf "%.2f s, %.0f MB/s", us / 1e6, b / us }') |"
    done
    row+=" $(awk -v a="${best[replay]}" -v c="${best[read_cat]}" 'BEGIN { printf "%.0f%%", 100 * c / a }') |"
    echo "$row"
    unset best
  done
done
rm -rf "$WORK"
