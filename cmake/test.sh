#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs what is missing, builds, and runs the whole test suite.
# With CI=true (or COMMITLOG_SANITIZERS=1) it then also builds and runs the
# suite under ASan+UBSan and under TSan, and runs each libFuzzer target for
# a minute (cmake/fuzz.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash cmake/install-deps.sh test
# Much of the suite waits on fdatasync and on the processes it spawns, so it
# runs one test more at a time than there are cores.
jobs=$(($(nproc) + 1))
# Runs a stage and says how long it took.
timed() {
  local stage=$1 start=$SECONDS
  shift
  "$@"
  echo "test.sh: $stage took $((SECONDS - start)) s"
}
cmake --preset release -DCOMMITLOG_BUILD_TESTS=ON >/dev/null
timed "release build" cmake --build --preset release
timed "release tests" ctest --preset release -j"$jobs" --timeout 600
if [[ "${CI:-}" == "true" || "${COMMITLOG_SANITIZERS:-}" == "1" ]]; then
  # The sanitizer builds stop at what their tests run: the test binary, and the
  # CLI and the kv server it spawns (not the shared library or space-stall tool).
  # The ASan+UBSan tree (clang) also holds the fuzz targets, built here at once.
  sanitized_targets=(--target commitlog_tests commitlog_cli commitlog-kv)
  cmake --preset asan-ubsan >/dev/null
  timed "ASan+UBSan build" cmake --build --preset asan-ubsan "${sanitized_targets[@]}" \
    fuzz_segment_reader fuzz_config fuzz_resp
  timed "ASan+UBSan tests" ctest --preset asan-ubsan -j"$jobs" --timeout 900
  # Under TSan the tests that run the kv server are left out: the server runs
  # its own epoll-driven Boost.Fiber scheduler, whose stack switches TSan cannot
  # follow, and a (false) report there aborts the server mid-test. Its recovery
  # tests, with no client, and the library's own fiber tests run under TSan.
  cmake --preset tsan >/dev/null
  timed "TSan build" cmake --build --preset tsan "${sanitized_targets[@]}"
  timed "TSan tests" ctest --preset tsan -j"$jobs" --timeout 900 -E '^kv(:| engine:|_)'
  FUZZ_SECONDS=${FUZZ_SECONDS:-60} timed "fuzzing" bash cmake/fuzz.sh
fi
