// SPDX-License-Identifier: Apache-2.0
// Runs the commitlog binary (COMMITLOG_CLI) as a child process, the way an
// operator or a script does, and collects what it printed.
#pragma once

#include <string>
#include <vector>

namespace commitlog::testing {

struct CliResult {
  int exit_code = -1;  // 128 + signal when the binary crashed
  std::string out;
  std::string err;
};

// Runs `cli` with `args`, stdin from /dev/null; waits for it.
CliResult run_cli(const std::string& cli, const std::vector<std::string>& args);
// The same for the commitlog binary this build made.
CliResult run_cli(const std::vector<std::string>& args);

}  // namespace commitlog::testing
