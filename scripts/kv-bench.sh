#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# redis-benchmark -t set,get against commitlog-kv (RocksDB with its WAL off,
# the commit log as its WAL) with each sync policy and, in the same run,
# against the same server in its reference setting (--reference-rocksdb-wal:
# no commit log, RocksDB's own WAL synced once per round of a worker, the way
# the log is flushed, so both group their fsyncs) and Debian's
# redis-server with appendonly yes and appendfsync always. Prints a markdown
# table of requests per second (and the SET p50 latency) by client count,
# for docs/performance.md.
#
#   scripts/kv-bench.sh [N]        N requests per test at one client [10000]
#
# With more clients each test gets more requests, N x clients/4 (at least N,
# at most 16 N), so that every test runs for about a second or more: at 64
# clients 10,000 SETs take 0.1 s, most of it a fresh server's first rounds.
#
# For each repeat and client count, every server is started in a fresh
# directory, on its own loopback port, benchmarked, and stopped, one after
# the other (alternated rounds), so that the servers compared are measured
# seconds apart. Each cell of the table is the median of the repeats. A
# second table sets the SETs of adaptive, the RocksDB-WAL reference and
# Redis `always` side by side round by round, with adaptive's ratio to each.
#
# Environment (defaults in brackets):
#   KV               [build/bin/commitlog-kv under the repository]
#   REDIS_SERVER, REDIS_BENCHMARK   [redis-server, redis-benchmark]
#   CLIENTS          ["1 16 64 256"]
#   POLICIES         commit-log policies ["adaptive"]
#   REDIS_FSYNC      Redis appendfsync settings ["always"]
#   WINDOW_MS        group window in ms (the log's smallest unit for it) [1]
#   THREADS          commitlog-kv --threads, the reference's too [its default, 1]
#   REPEAT           runs of each cell; the table shows the median [3]
#   VALUE_SIZE       redis-benchmark -d [3, its default]
#   WORK             scratch directory, on the disk to measure [mktemp -d]
#   PIN              1: every server runs on the last CPU and redis-benchmark
#                    on the others (taskset), so that where the scheduler
#                    puts the client and the servers' threads does not decide
#                    the result; 0: no pinning [1 with 2 or more CPUs]
set -euo pipefail

n=${1:-10000}
[[ $n =~ ^[0-9]+$ ]] || { echo "usage: $0 [N]" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
kv=${KV:-$root/build/bin/commitlog-kv}
redis_server=${REDIS_SERVER:-redis-server}
redis_benchmark=${REDIS_BENCHMARK:-redis-benchmark}
read -r -a clients <<< "${CLIENTS:-1 16 64 256}"
read -r -a policies <<< "${POLICIES:-adaptive}"
read -r -a redis_fsync <<< "${REDIS_FSYNC:-always}"
window=${WINDOW_MS:-1}
threads=${THREADS:-}
repeat=${REPEAT:-3}
value_size=${VALUE_SIZE:-3}
[[ -x $kv ]] || { echo "$0: $kv is not executable; build it or set KV" >&2; exit 2; }
for tool in "$redis_server" "$redis_benchmark"; do
  command -v "$tool" > /dev/null || { echo "$0: $tool not found (Debian packages redis-server, redis-tools)" >&2; exit 2; }
done
work=${WORK:-$(mktemp -d "${TMPDIR:-/tmp}/kv-bench.XXXXXX")}
mkdir -p "$work"
cpus=$(nproc)
pin=${PIN:-1}
((cpus < 2)) && pin=0
server_on=() client_on=()
if ((pin)); then
  command -v taskset > /dev/null || { echo "$0: taskset not found (Debian package util-linux); or set PIN=0" >&2; exit 2; }
  server_on=(taskset -c $((cpus - 1)))
  client_on=(taskset -c "0-$((cpus - 2))")
fi
echo "scratch directory $work on $(df --output=fstype "$work" | tail -1) ($cpus cores, load $(cut -d' ' -f1-3 /proc/loadavg); $( ((pin)) && echo "servers on CPU $((cpus - 1)), redis-benchmark on CPUs 0-$((cpus - 2))" || echo "not pinned"))" >&2

# requests CLIENTS: the requests of one test at that client count.
requests() {
  local scale=$(($1 / 4))
  ((scale < 1)) && scale=1
  ((scale > 16)) && scale=16
  echo $((n * scale))
}

server_pid=
cleanup() { if [[ -n $server_pid ]]; then kill -9 "$server_pid" 2> /dev/null || true; fi; }
trap cleanup EXIT

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' 2> /dev/null ||
    echo $((20000 + RANDOM % 20000))
}

# start TARGET DIR: starts the server of TARGET (kv:<policy>, ref:rocksdb-wal
# or redis:<fsync>)
# in DIR; sets server_pid and port.
start() {
  local target=$1 dir=$2
  mkdir -p "$dir"
  port=$(free_port)
  case $target in
    kv:*)
      local policy=${target#kv:}
      {
        echo "commitlog_sync: $policy"
        [[ $policy == group ]] && echo "commitlog_sync_group_window: ${window}ms"
      } > "$dir/commitlog.yaml"
      "${server_on[@]}" "$kv" --dir "$dir" --config "$dir/commitlog.yaml" --port "$port" ${threads:+--threads "$threads"} \
        > "$dir/server.log" 2>&1 &
      ;;
    ref:*)
      "${server_on[@]}" "$kv" --dir "$dir" --reference-rocksdb-wal --port "$port" ${threads:+--threads "$threads"} \
        > "$dir/server.log" 2>&1 &
      ;;
    redis:*)
      "${server_on[@]}" "$redis_server" --port "$port" --bind 127.0.0.1 --dir "$dir" --save "" --appendonly yes \
        --appendfsync "${target#redis:}" --daemonize no --logfile "$dir/server.log" &
      ;;
  esac
  server_pid=$!
  for _ in $(seq 1 500); do
    redis-cli -p "$port" ping 2> /dev/null | grep -q PONG && return 0
    kill -0 "$server_pid" 2> /dev/null || { echo "$target failed to start:" >&2; cat "$dir/server.log" >&2; exit 1; }
    sleep 0.02
  done
  echo "$target did not answer PING" >&2
  exit 1
}

stop() {
  kill -TERM "$server_pid"
  wait "$server_pid" 2> /dev/null || true
  server_pid=
}

targets=()
for p in "${policies[@]}"; do targets+=("kv:$p"); done
targets+=(ref:rocksdb-wal)
for f in "${redis_fsync[@]}"; do targets+=("redis:$f"); done

declare -A set_rps get_rps set_p50  # space-separated samples
declare -A round_set                    # one sample per round: [target,c,r]
for r in $(seq 1 "$repeat"); do
  for c in "${clients[@]}"; do
    for target in "${targets[@]}"; do
      dir=$work/${target/:/-}-c$c
      start "$target" "$dir"
      reqs=$(requests "$c")
      out=$("${client_on[@]}" "$redis_benchmark" -p "$port" -t set,get -n "$reqs" -c "$c" -d "$value_size" -q 2> /dev/null | tr '\r' '\n' |
        grep 'requests per second' || true)
      stop
      s=$(sed -n 's/^SET: \([0-9.]*\) requests.*/\1/p' <<< "$out")
      g=$(sed -n 's/^GET: \([0-9.]*\) requests.*/\1/p' <<< "$out")
      p=$(sed -n 's/^SET: .*p50=\([0-9.]*\) msec.*/\1/p' <<< "$out")
      set_rps[$target,$c]+=" $s" get_rps[$target,$c]+=" $g" set_p50[$target,$c]+=" $p"
      round_set[$target,$c,$r]=$s
      echo "run $r $target c=$c: SET ${s:-?}/s p50 ${p:-?} ms, GET ${g:-?}/s" >&2
      rm -rf "$dir"
    done
  done
done

label() {
  case $1 in
    kv:group) echo "commitlog-kv group (${window} ms window)" ;;
    kv:*) echo "commitlog-kv ${1#kv:} (RocksDB, its WAL off, the commit log)" ;;
    ref:*) echo "commitlog-kv --reference-rocksdb-wal (reference setting: RocksDB's WAL, one SyncWAL a round)" ;;
    redis:*) echo "redis-server appendfsync ${1#redis:}" ;;
  esac
}
# median SAMPLES...: the median, rounded; "-" without samples.
median() {
  (($#)) || { echo "-"; return; }
  printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END {
    m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
    printf (m < 10 ? "%.2f" : "%.0f"), m }'
}

header="| server |"
rule="|---|"
for c in "${clients[@]}"; do header+=" SET c=$c |"; rule+="---:|"; done
for c in "${clients[@]}"; do header+=" GET c=$c |"; rule+="---:|"; done
echo
ns=()
for c in "${clients[@]}"; do ns+=("$(requests "$c") at c=$c"); done
echo "requests per second, median of $repeat runs of redis-benchmark -t set,get -d $value_size" \
  "-n $(IFS=,; echo "${ns[*]}" | sed 's/,/, /g') (SET p50 latency in ms in brackets, also a median;" \
  "$( ((pin)) && echo "servers on CPU $((cpus - 1)), redis-benchmark on CPUs 0-$((cpus - 2))" || echo "not pinned"))"
echo
echo "$header"
echo "$rule"
for target in "${targets[@]}"; do
  row="| $(label "$target") |"
  # shellcheck disable=SC2086  # the samples are meant to split
  for c in "${clients[@]}"; do row+=" $(median ${set_rps[$target,$c]}) ($(median ${set_p50[$target,$c]})) |"; done
  # shellcheck disable=SC2086
  for c in "${clients[@]}"; do row+=" $(median ${get_rps[$target,$c]}) |"; done
  echo "$row"
done

# The round-by-round table, when adaptive ran.
if [[ " ${policies[*]} " == *" adaptive "* ]]; then
  echo
  echo "SET per second round by round: adaptive / RocksDB-WAL reference / Redis always (adaptive's" \
    "ratio to the reference, to Redis)"
  echo
  header="| round |"
  rule="|---|"
  for c in "${clients[@]}"; do header+=" c=$c |"; rule+="---:|"; done
  echo "$header"
  echo "$rule"
  for r in $(seq 1 "$repeat"); do
    row="| $r |"
    for c in "${clients[@]}"; do
      a=${round_set[kv:adaptive,$c,$r]:-0} w=${round_set[ref:rocksdb-wal,$c,$r]:-0} x=${round_set[redis:always,$c,$r]:-0}
      row+=$(awk -v a="$a" -v w="$w" -v x="$x" 'BEGIN {
        rw = w > 0 ? sprintf("%.1fx", a / w) : "-"
        rx = x > 0 ? sprintf("%.2fx", a / x) : "-"
        printf " %.0f / %.0f / %.0f (%s, %s) |", a, w, x, rw, rx }')
    done
    echo "$row"
  done
fi
echo
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
[[ -n ${WORK:-} ]] || rm -rf "$work"
