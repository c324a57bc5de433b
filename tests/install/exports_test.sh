#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# libcommitlog.so exports the public API and nothing of the implementation:
# no symbol names a class or struct defined outside include/commitlog, or
# yaml-cpp; the entry points of the README's example are there.
#   exports_test.sh LIBCOMMITLOG_SO SOURCE_DIR
set -euo pipefail
library=$1 source_dir=$2
fail() { echo "exports test: $*" >&2; exit 1; }

symbols=$(nm -D --defined-only -C "$library" | cut -d' ' -f3-)
[[ -n $symbols ]] || fail "$library exports nothing"
names() { grep -rhoE '^(class|struct) (\[\[[a-z]+\]\] )?(COMMITLOG_[A-Z]+ )?\w+' "$@" | awk '{print $NF}' | sort -u; }
public=$(names "$source_dir/include/commitlog")
internal=$(comm -23 <(names "$source_dir"/{commitlog,segment,policies}) <(echo "$public"))
[[ $(wc -l <<< "$internal") -gt 20 ]] || fail "found only $(wc -l <<< "$internal") internal classes: the scan is broken"
leaked=$(grep -oE 'commitlog::\w+' <<< "$symbols" | sed 's/^commitlog:://' | sort -u | grep -xF -f <(echo "$internal") || true)
[[ -z $leaked ]] || fail "internal classes exported:"$'\n'"$leaked"$'\n'"$(grep -E "commitlog::($(paste -sd'|' <<< "$leaked"))\b" <<< "$symbols" | head -20)"
! grep -q 'YAML::' <<< "$symbols" || fail "yaml-cpp types in the ABI: $(grep -m3 'YAML::' <<< "$symbols")"
for entry in 'commitlog::CommitLog::open(' 'commitlog::CommitLog::append(' 'commitlog::replay_directory(' \
  'commitlog::to_prometheus' 'commitlog::metric_fields()' 'commitlog::Status::to_string' 'vtable for commitlog::FileSystem'; do
  grep -qF "$entry" <<< "$symbols" || fail "$entry is not exported"
done
echo "exports test: $(wc -l <<< "$symbols") symbols, none of the $(wc -l <<< "$internal") internal classes"
