// SPDX-License-Identifier: Apache-2.0
#include "tests/support/run_process.h"

#include <sys/wait.h>

#include <cstdio>

namespace commitlog::testing {

ProcessRun run_process(const std::string& command) {
  ProcessRun run;
  std::FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return run;
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) run.out.append(buffer, n);
  const int status = ::pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

}  // namespace commitlog::testing
