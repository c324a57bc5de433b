#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The long kill -9 loop (docs/testing.md): start `commitlog stress`, kill
# it with SIGKILL after a random delay, restart it (it replays the log and each
# producer goes on after its last replayed mutation), and repeat. Every EPOCH
# cycles, one clean run and `commitlog stress --check`, then a fresh directory,
# so that the replay at each start stays short next to the kill delays.
#
#   scripts/kill-loop.sh DIR CYCLES POLICY        POLICY: batch, group, adaptive or periodic
#
# With DISCARD=1 the driver runs with --discard (a store flushing behind its
# appends): in MODE standard or direct, plain, the discarded segments are
# recycled, and the loop fails if none was; with LZ4=1 they are deleted,
# and it fails if one was recycled.
#
# Passes when every check passes, no start finds an entry misplaced, and
#   batch, group, adaptive: no run's start reports an acknowledged mutation lost;
#   periodic:               every kill lost at most MAX_WINDOW_MS of appends
#                           (kill time minus the newest append the next run
#                           replayed).
# Exit 0 on a pass, 1 on a failure, 2 on a usage error. The last line is the
# summary; DIR/runs.log keeps every run's output and every verdict.
#
# Environment (defaults in brackets):
#   COMMITLOG      the CLI [build/bin/commitlog under the repository]
#   SEED           seed of the delays [random; printed]
#   MIN_DELAY_MS, MAX_DELAY_MS   kill delay range, from the start [50, 300]
#   EPOCH          cycles per directory [100]
#   PRODUCERS, FIBERS            threads x fibers per thread [2 x 4]
#   SEGMENT_SIZE, MAX_SIZE       [64KiB, 1000]
#   WINDOW_MS      group window [2]
#   PERIOD_MS      periodic period, which is also its marker interval [50]
#   RATE           periodic appends per second, all producers [5000]
#   MAX_WINDOW_MS  periodic loss bound [PERIOD_MS + 150]
#   MODE           commitlog_disk_access_mode: mmap, standard, direct [the library's default]
#   LZ4            1: LZ4 compression [0]
#   DISCARD        1: stress --discard [0]
#   KEY_FILE       master keys (docs/encryption.md): the log is encrypted [not encrypted]
set -euo pipefail

if [[ $# -ne 3 || ! $2 =~ ^[0-9]+$ || ! $3 =~ ^(batch|group|adaptive|periodic)$ ]]; then
  echo "usage: $0 DIR CYCLES batch|group|adaptive|periodic" >&2
  exit 2
fi
dir=$1 cycles=$2 policy=$3
root=$(cd "$(dirname "$0")/.." && pwd)
cli=${COMMITLOG:-$root/build/bin/commitlog}
[[ -x $cli ]] || { echo "$0: $cli is not executable; set COMMITLOG" >&2; exit 2; }
seed=${SEED:-$(( (RANDOM << 15) | RANDOM ))}
min_delay=${MIN_DELAY_MS:-50} max_delay=${MAX_DELAY_MS:-300}
epoch=${EPOCH:-100}
period=${PERIOD_MS:-50}
max_window_us=$(( ${MAX_WINDOW_MS:-$((period + 150))} * 1000 ))

policy_flags=(--policy "$policy")
case $policy in
  group) policy_flags+=(--window "${WINDOW_MS:-2}") ;;
  periodic) policy_flags+=(--period "$period" --rate "${RATE:-5000}") ;;
esac
max_size=${MAX_SIZE:-1000}
common=(--segment-size "${SEGMENT_SIZE:-64KiB}" --producers "${PRODUCERS:-2}" --fibers "${FIBERS:-4}"
        --max-size "$max_size" "${policy_flags[@]}")
check_flags=()
[[ $policy == periodic ]] && check_flags=(--allow-loss)
mode=${MODE:-} lz4=${LZ4:-0} discard=${DISCARD:-0} key_file=${KEY_FILE:-}

mkdir -p "$dir"
if [[ -n $mode || $lz4 == 1 || -n $key_file ]]; then
  config=$dir/commitlog.yaml
  { [[ -n $mode ]] && echo "commitlog_disk_access_mode: $mode"
    [[ $lz4 == 1 ]] && printf 'commitlog_compression:\n  class_name: LZ4Compressor\n'
    [[ -n $key_file ]] && printf 'transparent_data_encryption_options:\n  enabled: true\n  key_provider:\n    - class_name: FileKeyProvider\n      parameters:\n        - key_file: %s\n' "$(realpath "$key_file")"
    true; } >"$config"
  common+=(--config "$config")
fi
[[ $discard == 1 ]] && common+=(--discard)
[[ -n $key_file ]] && check_flags+=(--key-file "$key_file")
runs_log=$dir/runs.log
: >"$runs_log"
RANDOM=$seed
echo "kill-loop: $policy, $cycles cycles, seed $seed, epochs of $epoch, mode ${mode:-default}, lz4 $lz4," \
     "discard $discard, encrypted $([[ -n $key_file ]] && echo yes || echo no), cli $cli"

failures=0 appending=0 lost_total=0 max_window=-1 checks=0 checks_ok=0
recycled_total=0 deleted_total=0 discarded_total=0 spare_kills=0
pending_from=0 pending_kill=0  # the last killed run that appended, not yet measured
started=$(date +%s)

field() {  # field KEY PREFIX FILE: the number after " KEY=" on the first line starting with PREFIX
  grep -m1 "^$2" "$3" | sed -nE "s/.* $1=([0-9]+).*/\1/p" || true
}

on_start() {  # on_start OUTPUT: account for the start line of a run
  local lost newest span from misplaced
  lost=$(field lost_acks 'stress: start' "$1")
  newest=$(field newest_us 'stress: start' "$1")
  [[ -n $lost && -n $newest ]] || return 0
  lost_total=$((lost_total + lost))
  misplaced=$(field misplaced 'stress: start' "$1")
  if [[ ${misplaced:-0} -ne 0 ]]; then
    echo "FAIL: $1: a replayed mutation is not where its ack says" | tee -a "$runs_log"
    failures=$((failures + 1))
  fi
  if [[ $lost -ne 0 && $policy != periodic ]]; then
    echo "FAIL: $1: $lost acknowledged mutations lost" | tee -a "$runs_log"
    failures=$((failures + 1))
  fi
  if [[ $pending_kill -ne 0 ]]; then
    from=$(( newest > pending_from ? newest : pending_from ))
    span=$(( pending_kill - from ))
    (( span > max_window )) && max_window=$span
    if [[ $policy == periodic && $span -gt $max_window_us ]]; then
      echo "FAIL: $1: a kill lost $((span / 1000)) ms of appends (bound $((max_window_us / 1000)) ms)" | tee -a "$runs_log"
      failures=$((failures + 1))
    fi
    pending_kill=0
  fi
}

count_discards() {  # count_discards OUTPUT: add the run's last "stress: discarded" counters
  local line
  line=$(grep '^stress: discarded' "$1" | tail -1 || true)
  [[ -n $line ]] || return 0
  recycled_total=$((recycled_total + $(sed -nE 's/.* segments_recycled=([0-9]+).*/\1/p' <<<"$line")))
  deleted_total=$((deleted_total + $(sed -nE 's/.* segments_deleted=([0-9]+).*/\1/p' <<<"$line")))
}

finish_epoch() {  # finish_epoch LOGDIR ACKS: a clean run, then the check
  local out=$dir/last.out
  if ! "$cli" stress --dir "$1" --acks "$2" "${common[@]}" --duration 0.3 >"$out" 2>&1; then
    echo "FAIL: the clean run in $1 failed" | tee -a "$runs_log"
    failures=$((failures + 1))
  fi
  cat "$out" >>"$runs_log"
  on_start "$out"
  count_discards "$out"
  checks=$((checks + 1))
  if "$cli" stress --check --dir "$1" --acks "$2" --max-size "$max_size" "${check_flags[@]}" >"$out" 2>&1; then
    checks_ok=$((checks_ok + 1))
  else
    failures=$((failures + 1))
  fi
  local n
  n=$(field discarded 'stress check' "$out") && discarded_total=$((discarded_total + ${n:-0}))
  echo "$1: $(grep '^stress check' "$out")" | tee -a "$runs_log"
  sed -n '/^stress check/!p' "$out" >>"$runs_log"
}

for ((cycle = 0; cycle < cycles; cycle++)); do
  logdir=$dir/epoch-$((cycle / epoch))/log acks=$dir/epoch-$((cycle / epoch))/acks
  out=$dir/run.out
  delay=$(( min_delay + RANDOM % (max_delay - min_delay + 1) ))
  "$cli" stress --dir "$logdir" --acks "$acks" "${common[@]}" >"$out" 2>&1 &
  pid=$!
  sleep "$(printf '%d.%03d' $((delay / 1000)) $((delay % 1000)))"
  kill_us=$(date +%s%6N)
  kill -9 "$pid" 2>/dev/null || true
  status=0
  wait "$pid" 2>/dev/null || status=$?
  { echo "=== cycle $cycle: killed after $delay ms, status $status"; cat "$out"; } >>"$runs_log"
  if [[ $status -ne 137 ]]; then
    echo "FAIL: cycle $cycle: the driver ended with status $status before the kill" | tee -a "$runs_log"
    failures=$((failures + 1))
  fi
  compgen -G "$logdir/*.spare" >/dev/null && spare_kills=$((spare_kills + 1))
  count_discards "$out"
  on_start "$out"
  from=$(field from_us 'stress: appending' "$out")
  if [[ -n $from ]]; then
    pending_from=$from pending_kill=$kill_us
    appending=$((appending + 1))
  fi
  if (( (cycle + 1) % epoch == 0 || cycle + 1 == cycles )); then
    finish_epoch "$logdir" "$acks"
    pending_kill=0
  fi
done

if [[ $discard == 1 && $lz4 != 1 && $mode =~ ^(standard|direct)$ && $recycled_total -eq 0 ]]; then
  echo "FAIL: no segment was recycled" | tee -a "$runs_log"
  failures=$((failures + 1))
fi
if [[ $lz4 == 1 && $recycled_total -ne 0 ]]; then
  echo "FAIL: $recycled_total compressed segments were recycled" | tee -a "$runs_log"
  failures=$((failures + 1))
fi
verdict=PASS
(( failures == 0 )) || verdict=FAIL
echo "kill-loop: $verdict policy=$policy cycles=$cycles killed_while_appending=$appending" \
     "acks_lost_at_restarts=$lost_total max_kill_to_newest_replayed_ms=$((max_window / 1000))" \
     "checks_ok=$checks_ok/$checks discarded_acks=$discarded_total segments_recycled=$recycled_total" \
     "segments_deleted=$deleted_total kills_leaving_spares=$spare_kills seed=$seed seconds=$(( $(date +%s) - started ))"
[[ $verdict == PASS ]]
