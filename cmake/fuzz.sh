#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan + UBSan) and runs each for
# FUZZ_SECONDS (default 60) from its seed corpus. A crashing input is written
# to tests/fuzz/regressions/<target>/ so it becomes a regression test
# (tests/fuzz_regression_test.cc replays every file there).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-60}
cmake -S . -B build-fuzz -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCOMMITLOG_BUILD_FUZZERS=ON -DCOMMITLOG_BUILD_TESTS=OFF -DCOMMITLOG_BUILD_TOOLS=OFF \
  -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined" >/dev/null
cmake --build build-fuzz -j2 --target fuzz_segment_reader fuzz_config fuzz_resp
for target in segment_reader config resp; do
  kind=${target%_reader}
  corpus=$(mktemp -d)
  cp tests/fuzz/seeds/"$kind"/* "$corpus"/
  echo "fuzz_$target: ${seconds}s"
  build-fuzz/bin/fuzz_"$target" -max_total_time="$seconds" -max_len=65536 -timeout=10 \
    -artifact_prefix=tests/fuzz/regressions/"$kind"/ "$corpus" 2>&1 | tail -n 3
  rm -rf "$corpus"
done
