#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tools/cli/completion.bash completes subcommands, flags and listed values
# of the built commitlog and commitlog-kv.
#   completion_test.sh BIN_DIR COMPLETION_FILE
set -euo pipefail
PATH=$(cd "$1" && pwd):$PATH
source "$2"
failed=0
expect() {
  local want=$1
  shift
  COMP_WORDS=("$@")
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  _commitlog
  local got="${COMPREPLY[*]}"
  if [[ $got != "$want" ]]; then
    echo "completion test: '$*' completes to '$got', expected '$want'" >&2
    failed=1
  fi
}
expect "config" commitlog co
expect "demo dump" commitlog d
expect "text json yaml" commitlog config --format ""
expect "yaml" commitlog config --strict --format y
expect "jsonl" commitlog dump --format j
expect "--format" commitlog config --f
expect "yes no" commitlog-kv --protected-mode ""
expect "--reference-rocksdb-wal --recovery --requirepass --requirepass-file" commitlog-kv --re
[[ $(complete -p commitlog commitlog-kv | grep -c -- '-F _commitlog') == 2 ]] || { echo "not registered" >&2; failed=1; }
exit $failed
