// SPDX-License-Identifier: Apache-2.0
// Child processes that a test starts, kills and waits for (the kill -9 loops,
// commitlog-kv).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace commitlog::testing {

// Where a child's stdout and stderr both go.
struct ChildOutput {
  enum class Kind {
    kAppend,    // to the file `path`, created if missing
    kTruncate,  // to the file `path`, emptied first
    kPipe,      // to a pipe whose read end spawn() gives the caller
  };
  Kind kind = Kind::kAppend;
  std::string path;
};

// Starts `args` (args[0] a path) with its output where `output` says; -1 if
// it could not start. With kPipe, `*pipe_read` gets the pipe's read end, the
// caller's to close.
pid_t spawn(const std::vector<std::string>& args, const ChildOutput& output, int* pipe_read = nullptr);
// The same, appending to the file `out`.
inline pid_t spawn(const std::vector<std::string>& args, const std::string& out) {
  return spawn(args, ChildOutput{ChildOutput::Kind::kAppend, out});
}
// Waits for `pid` and returns its wait status (WIFEXITED and so on).
int wait_status(pid_t pid);
// The contents of `path`, "" when it cannot be read.
std::string read_text_file(const std::string& path);

}  // namespace commitlog::testing
