#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan + UBSan) and runs each for
# FUZZ_SECONDS (default 60) from its seed corpus. A crashing input is written
# to tests/fuzz/regressions/<target>/ so it becomes a regression test
# (tests/fuzz_regression_test.cc replays every file there).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-60}
cmake -S . -B build-fuzz -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
  -DCOMMITLOG_BUILD_FUZZERS=ON -DCOMMITLOG_BUILD_TESTS=OFF -DCOMMITLOG_BUILD_TOOLS=OFF \
  -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined" >/dev/null
cmake --build build-fuzz -j2 --target fuzz_segment_reader fuzz_config fuzz_resp
# The targets run side by side, so the stage takes FUZZ_SECONDS whatever the
# number of cores; each prints its last lines when all are done.
logs=$(mktemp -d)
pids=()
for target in segment_reader config resp; do
  kind=${target%_reader}
  corpus="$logs/$kind"
  mkdir "$corpus"
  cp tests/fuzz/seeds/"$kind"/* "$corpus"/
  build-fuzz/bin/fuzz_"$target" -max_total_time="$seconds" -max_len=65536 -timeout=10 \
    -artifact_prefix=tests/fuzz/regressions/"$kind"/ "$corpus" >"$logs/$target.log" 2>&1 &
  pids+=($!)
done
failed=0
for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
for target in segment_reader config resp; do
  echo "fuzz_$target: ${seconds}s"
  tail -n 3 "$logs/$target.log"
done
rm -rf "$logs"
exit "$failed"
