#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite.
# With CI=true (or COMMITLOG_SANITIZERS=1) it then also builds and runs the
# suite under ASan+UBSan and under TSan, and runs each libFuzzer target for
# a minute (cmake/fuzz.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash cmake/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release
ctest --preset release -j2 --timeout 600
if [[ "${CI:-}" == "true" || "${COMMITLOG_SANITIZERS:-}" == "1" ]]; then
  for preset in asan-ubsan tsan; do
    cmake --preset "$preset" >/dev/null
    cmake --build --preset "$preset"
    ctest --preset "$preset" -j2 --timeout 900
  done
  FUZZ_SECONDS=${FUZZ_SECONDS:-60} bash cmake/fuzz.sh
fi
