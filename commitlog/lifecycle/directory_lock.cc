// SPDX-License-Identifier: Apache-2.0
#include "commitlog/lifecycle/directory_lock.h"

#include <unistd.h>

namespace commitlog {

std::string lock_file_path(const std::string& dir) { return dir + "/" + kLockFileName; }

Result<std::unique_ptr<FileLock>> lock_log_directory(FileSystem& fs, const std::string& dir,
                                                     uint32_t permissions) {
  const std::string path = lock_file_path(dir);
  auto lock = fs.lock(path, permissions);
  if (lock.ok() || lock.status().code() != ErrorCode::kBusy) return lock;
  // The holder as it is now; it may have gone since the refusal.
  auto holder = fs.lock_holder(path);
  const int64_t pid = holder.ok() && holder->has_value() ? **holder : 0;
  std::string by = "elsewhere";
  if (pid > 0) {
    by = "in process " + std::to_string(pid) + (pid == ::getpid() ? ", this one" : "");
  }
  return Status::busy(dir + ": the commit log is already open " + by + " (lock file " + path + ")");
}

std::optional<int64_t> log_writer(FileSystem& fs, const std::string& dir) {
  auto holder = fs.lock_holder(lock_file_path(dir));
  if (!holder.ok()) return std::nullopt;
  return *holder;
}

}  // namespace commitlog
