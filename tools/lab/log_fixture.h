// SPDX-License-Identifier: Apache-2.0
// `commitlog replay-fixture DIR [--bytes N] [--payload N] ...` (hidden): writes
// a log of a given size quickly, through the library, for measuring replay
// speed (tools/lab/replay_speed.sh, docs/performance.md). Payloads are text-like
// (words from a small vocabulary) so that compression has something to do.
#pragma once

#include <CLI/CLI.hpp>

namespace commitlog::tools {

void add_replay_fixture_command(CLI::App& app, int& exit_code);

}  // namespace commitlog::tools
