// SPDX-License-Identifier: Apache-2.0
// The commitlog CLI's subcommands. Each lives in its own file and adds itself
// to the app; its callback stores the process exit code in `exit_code`.
// Exit codes: 0 ok, 1 corruption found (verify, replay, stress --check, tail),
// 2 usage or input error.
#pragma once

#include <CLI/CLI.hpp>

namespace commitlog::tools {

inline constexpr int kExitOk = 0;
inline constexpr int kExitCorruption = 1;
inline constexpr int kExitUsage = 2;

void add_demo_command(CLI::App& app, int& exit_code);
void add_config_command(CLI::App& app, int& exit_code);
void add_dump_command(CLI::App& app, int& exit_code);
void add_verify_command(CLI::App& app, int& exit_code);
void add_replay_command(CLI::App& app, int& exit_code);
void add_stat_command(CLI::App& app, int& exit_code);
// `commitlog bench`: runs commitlog-bench (beside this binary, else on PATH)
// with the arguments that follow.
void add_bench_alias(CLI::App& app, int& exit_code);
// commitlog-bench's options and run, on `cmd` (its top-level app).
void add_bench_options(CLI::App& cmd, int& exit_code);
void add_stress_command(CLI::App& app, int& exit_code);
void add_tail_command(CLI::App& app, int& exit_code);
void add_tail_bench_command(CLI::App& app, int& exit_code);

}  // namespace commitlog::tools
