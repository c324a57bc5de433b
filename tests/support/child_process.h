// Child processes that a test starts, kills and waits for (the kill -9 loops).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace commitlog::testing {

// Starts `args` (args[0] a path) with stdout and stderr appended to `out`;
// -1 if it could not start.
pid_t spawn(const std::vector<std::string>& args, const std::string& out);
// Waits for `pid` and returns its wait status (WIFEXITED and so on).
int wait_status(pid_t pid);
// The contents of `path`, "" when it cannot be read.
std::string read_text_file(const std::string& path);

}  // namespace commitlog::testing
