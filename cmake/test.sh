#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite.
# With CI=true it also runs the suite under ASan+UBSan and under TSan.
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
fi
