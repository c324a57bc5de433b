// SPDX-License-Identifier: Apache-2.0
#include "tools/cli/live_writer.h"

#include <filesystem>
#include <set>

#include <fmt/core.h>

#include "commitlog/lifecycle/directory_lock.h"

namespace commitlog::tools {

std::optional<int64_t> note_live_writer(const char* command, const std::string& dir) {
  const std::optional<int64_t> pid = log_writer(*posix_file_system(), dir);
  if (!pid) return pid;
  const std::string writer = *pid > 0 ? fmt::format("process {}", *pid) : "another process";
  fmt::print(stderr, "commitlog {}: note: {} is open for writing by {}; its newest segment may still be growing\n",
             command, dir, writer);
  return pid;
}

void note_live_writers(const char* command, const std::vector<std::string>& paths) {
  std::set<std::string> seen;
  for (const std::string& path : paths) {
    std::error_code ec;
    const std::filesystem::path p(path);
    std::string dir = std::filesystem::is_directory(p, ec) ? path : p.parent_path().string();
    if (dir.empty()) dir = ".";
    if (seen.insert(dir).second) note_live_writer(command, dir);
  }
}

}  // namespace commitlog::tools
