#!/usr/bin/env bash
# redis-benchmark -t set,get against commitlog-kv with each sync policy and,
# in the same run, against Debian's redis-server with appendonly yes and
# appendfsync always / everysec. Prints a markdown table of requests per
# second (and the SET p50 latency) by client count, for docs/benchmarks.md.
#
#   scripts/kv-bench.sh [N]        N requests per test [10000]
#
# For each client count, every server is started in a fresh directory, on its
# own loopback port, benchmarked, and stopped, one after the other, so that
# the columns of one row are measured minutes apart at most.
#
# Environment (defaults in brackets):
#   KV               [build/bin/commitlog-kv under the repository]
#   REDIS_SERVER, REDIS_BENCHMARK   [redis-server, redis-benchmark]
#   CLIENTS          ["1 16 64 256"]
#   POLICIES         commit-log policies ["batch group adaptive periodic"]
#   WINDOW_MS        group window [2]
#   VALUE_SIZE       redis-benchmark -d [3, its default]
#   WORK             scratch directory, on the disk to measure [mktemp -d]
set -euo pipefail

n=${1:-10000}
[[ $n =~ ^[0-9]+$ ]] || { echo "usage: $0 [N]" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
kv=${KV:-$root/build/bin/commitlog-kv}
redis_server=${REDIS_SERVER:-redis-server}
redis_benchmark=${REDIS_BENCHMARK:-redis-benchmark}
read -r -a clients <<< "${CLIENTS:-1 16 64 256}"
read -r -a policies <<< "${POLICIES:-batch group adaptive periodic}"
window=${WINDOW_MS:-2}
value_size=${VALUE_SIZE:-3}
[[ -x $kv ]] || { echo "$0: $kv is not executable; build it or set KV" >&2; exit 2; }
for tool in "$redis_server" "$redis_benchmark"; do
  command -v "$tool" > /dev/null || { echo "$0: $tool not found (Debian packages redis-server, redis-tools)" >&2; exit 2; }
done
work=${WORK:-$(mktemp -d "${TMPDIR:-/tmp}/kv-bench.XXXXXX")}
mkdir -p "$work"
echo "scratch directory $work on $(df --output=fstype "$work" | tail -1) ($(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg))" >&2

server_pid=
cleanup() { [[ -n $server_pid ]] && kill -9 "$server_pid" 2> /dev/null || true; }
trap cleanup EXIT

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' 2> /dev/null ||
    echo $((20000 + RANDOM % 20000))
}

# start TARGET DIR: starts the server of TARGET (kv:<policy> or redis:<fsync>)
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
      "$kv" --dir "$dir" --config "$dir/commitlog.yaml" --port "$port" > "$dir/server.log" 2>&1 &
      ;;
    redis:*)
      "$redis_server" --port "$port" --bind 127.0.0.1 --dir "$dir" --save "" --appendonly yes \
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
targets+=(redis:always redis:everysec)

declare -A set_rps get_rps set_p50
for c in "${clients[@]}"; do
  for target in "${targets[@]}"; do
    dir=$work/${target/:/-}-c$c
    start "$target" "$dir"
    out=$("$redis_benchmark" -p "$port" -t set,get -n "$n" -c "$c" -d "$value_size" -q 2> /dev/null | tr '\r' '\n' |
      grep 'requests per second')
    stop
    set_rps[$target,$c]=$(sed -n 's/^SET: \([0-9.]*\) requests.*/\1/p' <<< "$out")
    get_rps[$target,$c]=$(sed -n 's/^GET: \([0-9.]*\) requests.*/\1/p' <<< "$out")
    set_p50[$target,$c]=$(sed -n 's/^SET: .*p50=\([0-9.]*\) msec.*/\1/p' <<< "$out")
    echo "$target c=$c: SET ${set_rps[$target,$c]}/s p50 ${set_p50[$target,$c]} ms, GET ${get_rps[$target,$c]}/s" >&2
    rm -rf "$dir"
  done
done

label() {
  case $1 in
    kv:group) echo "commitlog-kv group (${window} ms window)" ;;
    kv:*) echo "commitlog-kv ${1#kv:}" ;;
    redis:*) echo "redis-server appendfsync ${1#redis:}" ;;
  esac
}
round() { awk -v x="$1" 'BEGIN { if (x == "") print "-"; else printf "%.0f", x }'; }

header="| server |"
rule="|---|"
for c in "${clients[@]}"; do header+=" SET c=$c |"; rule+="---:|"; done
for c in "${clients[@]}"; do header+=" GET c=$c |"; rule+="---:|"; done
echo
echo "requests per second, redis-benchmark -t set,get -n $n -d $value_size (SET p50 latency in ms in brackets)"
echo
echo "$header"
echo "$rule"
for target in "${targets[@]}"; do
  row="| $(label "$target") |"
  for c in "${clients[@]}"; do row+=" $(round "${set_rps[$target,$c]}") (${set_p50[$target,$c]:--}) |"; done
  for c in "${clients[@]}"; do row+=" $(round "${get_rps[$target,$c]}") |"; done
  echo "$row"
done
[[ -n ${WORK:-} ]] || rm -rf "$work"
