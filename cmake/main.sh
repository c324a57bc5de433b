#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs what is missing, builds the tools, and shows what the commit log is
# for: a key-value server on it killed with kill -9 under load, restarted, and
# every acknowledged write checked (scripts/mission.sh; its options pass through).
set -euo pipefail
cd "$(dirname "$0")/.."
bash cmake/install-deps.sh
cmake --preset release -DCOMMITLOG_BUILD_TESTS=OFF >/dev/null
cmake --build --preset release --target commitlog_cli commitlog-kv
bash scripts/mission.sh "$@"
