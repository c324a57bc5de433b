#!/usr/bin/env bash
# Installs what is missing, builds, and runs the main job.
set -euo pipefail
cd "$(dirname "$0")/.."
bash cmake/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release
./build/bin/commitlog bench --quick "$@"
