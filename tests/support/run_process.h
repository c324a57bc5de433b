// SPDX-License-Identifier: Apache-2.0
// Runs a command line as a child process, for tests that drive the built
// binaries.
#pragma once

#include <string>

namespace commitlog::testing {

struct ProcessRun {
  int exit_code = -1;  // -1 when it could not start or was killed
  std::string out;     // what it wrote to stdout
};

// Runs `command` with /bin/sh (popen) and waits for it. Its stderr goes where
// the command line sends it: append " 2>&1" to capture it too.
ProcessRun run_process(const std::string& command);

}  // namespace commitlog::testing
