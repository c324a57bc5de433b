#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the libFuzzer targets in the ASan+UBSan tree (the asan-ubsan preset,
# clang-14, whose library is instrumented for them) and runs each for
# FUZZ_SECONDS (default 60) from its seed corpus. A crashing input is written
# to tests/fuzz/regressions/<target>/ so it becomes a regression test
# (tests/crash/fuzz_regression_test.cc replays every file there).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-60}
cmake --preset asan-ubsan >/dev/null
cmake --build --preset asan-ubsan --target fuzz_segment_reader fuzz_config fuzz_resp
# The targets run side by side, so the stage takes FUZZ_SECONDS whatever the
# number of cores; each prints its last lines when all are done.
logs=$(mktemp -d)
pids=()
for target in segment_reader config resp; do
  kind=${target%_reader}
  corpus="$logs/$kind"
  mkdir "$corpus"
  cp tests/fuzz/seeds/"$kind"/* "$corpus"/
  build-asan/bin/fuzz_"$target" -max_total_time="$seconds" -max_len=65536 -timeout=10 \
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
