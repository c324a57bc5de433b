// SPDX-License-Identifier: Apache-2.0
#include "tests/support/child_process.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <sstream>

extern char** environ;

namespace commitlog::testing {

pid_t spawn(const std::vector<std::string>& args, const ChildOutput& output, int* pipe_read) {
  std::vector<char*> argv;
  for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  int fds[2] = {-1, -1};
  if (output.kind == ChildOutput::Kind::kPipe && ::pipe2(fds, O_CLOEXEC) != 0) return -1;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (output.kind == ChildOutput::Kind::kPipe) {
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  } else {
    const int where = output.kind == ChildOutput::Kind::kTruncate ? O_TRUNC : O_APPEND;
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, output.path.c_str(), O_WRONLY | O_CREAT | where,
                                     0644);
  }
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  pid_t pid = -1;
  const int err = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (output.kind == ChildOutput::Kind::kPipe) {
    ::close(fds[1]);
    if (err == 0 && pipe_read != nullptr) {
      *pipe_read = fds[0];
    } else {
      ::close(fds[0]);
    }
  }
  return err == 0 ? pid : -1;
}

int wait_status(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return status;
}

std::string read_text_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace commitlog::testing
