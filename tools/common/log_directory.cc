// SPDX-License-Identifier: Apache-2.0
#include "tools/common/log_directory.h"

#include <algorithm>

#include "commitlog/lifecycle/directory_lock.h"
#include "commitlog/file_system.h"
#include "segment/file_name.h"

namespace commitlog::tools {

Status check_log_directory(const std::string& flag, const std::string& dir) {
  FileSystem& fs = *posix_file_system();
  if (!fs.exists(dir)) return {};
  if (!fs.is_directory(dir)) return Status::invalid_argument(flag + " " + dir + " is not a directory");
  auto names = fs.list(dir);
  if (!names.ok()) return names.status();
  std::sort(names->begin(), names->end());  // the same entry named on every run
  for (const std::string& name : *names) {
    auto id = parse_segment_file_name(name);
    const bool log_file = (id.ok() && *id) || parse_spare_file_name(name) || name == kLockFileName;
    if (log_file && !fs.is_directory(dir + "/" + name)) continue;
    return Status::invalid_argument(flag + " " + dir + " holds " + name +
                                    ", which is not a commit log segment: give a new or empty "
                                    "directory, or one holding only a log");
  }
  return {};
}

}  // namespace commitlog::tools
