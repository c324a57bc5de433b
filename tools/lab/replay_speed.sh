#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Replay speed against the ceiling of simply reading the same files
# (docs/performance.md, "Replay speed"). Usage:
#   tools/lab/replay_speed.sh [CLI] [WORK_DIR] [COMPRESSIONS] [REPS]
#   CLI           the commitlog binary (default build-tools/bin/commitlog)
#   WORK_DIR      scratch space for a 1 GiB log (default /tmp/commitlog-replay-speed), removed after
#   COMPRESSIONS  "none", "lz4" or "none lz4" (default none)
#   REPS          runs per figure; the best is reported (default 3)
# For each compression it writes a 1 GiB log of 1 KiB text-like payloads
# (`commitlog replay-fixture`), then times, with the page cache warm and with
# the log's pages dropped from it (posix_fadvise DONTNEED through
# `dd iflag=nocache`: no root needed, other files untouched):
#   cat     cat FILES > /dev/null                 (the ceiling: 128 KiB reads)
#   verify  commitlog verify DIR                  (the library's reader: read + checksums)
#   replay  commitlog replay DIR --out /dev/null  (the reader + JSON lines + base64)
# Each cell: best wall time of REPS runs, the MB/s it means (file bytes, as
# for cat), and the best CPU time (user + sys), which other load on the
# machine disturbs less. The last two columns: replay's rate as a share of cat's.
set -euo pipefail
CLI=${1:-build-tools/bin/commitlog}
WORK=${2:-/tmp/commitlog-replay-speed}
COMPRESSIONS=${3:-none}
REPS=${4:-3}

drop() { for f in "$WORK"/*.log; do dd if="$f" iflag=nocache count=0 status=none; done; }
warm() { cat "$WORK"/*.log > /dev/null; }
run() {  # run NAME: "wall_seconds cpu_seconds" of one run
  local t
  t=$(mktemp)
  case $1 in
    cat) /usr/bin/time -o "$t" -f "%e %U %S" bash -c 'cat "$0"/*.log > /dev/null' "$WORK" ;;
    verify) /usr/bin/time -o "$t" -f "%e %U %S" "$CLI" verify "$WORK" > /dev/null ;;
    replay) /usr/bin/time -o "$t" -f "%e %U %S" "$CLI" replay "$WORK" --out /dev/null 2> /dev/null ;;
  esac
  awk '{ printf "%s %.2f\n", $1, $2 + $3 }' "$t"
  rm -f "$t"
}

echo "| log | page cache | cat (ceiling) | verify | replay --out /dev/null | replay / cat, wall | replay / cat, CPU |"
echo "|---|---|---|---|---|---|---|"
for compression in $COMPRESSIONS; do
  rm -rf "$WORK"
  if ! wrote=$("$CLI" replay-fixture "$WORK" --bytes $((1 << 30)) --payload 1024 --compression "$compression"); then
    echo "| $compression | | could not write the log | | | | |"
    continue
  fi
  entries=$(sed -E 's/.*\(([0-9]+) bytes of entries\).*/\1/' <<< "$wrote")
  sync
  bytes=$(cat "$WORK"/*.log | wc -c)
  for cache in warm cold; do
    declare -A wall=() cpu=()
    for ((i = 0; i < REPS; i++)); do
      for what in cat verify replay; do
        if [[ $cache == warm ]]; then warm; else drop; fi
        read -r w c < <(run "$what")
        if [[ -z ${wall[$what]:-} ]] || awk -v a="$w" -v b="${wall[$what]}" 'BEGIN { exit !(a < b) }'; then wall[$what]=$w; fi
        if [[ -z ${cpu[$what]:-} ]] || awk -v a="$c" -v b="${cpu[$what]}" 'BEGIN { exit !(a < b) }'; then cpu[$what]=$c; fi
      done
    done
    row="| $compression: $((entries >> 20)) MiB of entries in $((bytes >> 20)) MiB of files | $cache |"
    for what in cat verify replay; do
      row+=" $(awk -v b="$bytes" -v w="${wall[$what]}" -v c="${cpu[$what]}" \
        'BEGIN { printf "%.2f s, %.0f MB/s (CPU %.2f s)", w, b / w / 1e6, c }') |"
    done
    row+=" $(awk -v r="${wall[replay]}" -v c="${wall[cat]}" 'BEGIN { printf "%.0f%%", 100 * c / r }') |"
    row+=" $(awk -v r="${cpu[replay]}" -v c="${cpu[cat]}" 'BEGIN { printf "%.0f%%", (r > 0) ? 100 * c / r : 0 }') |"
    echo "$row"
    unset wall cpu
  done
done
rm -rf "$WORK"
