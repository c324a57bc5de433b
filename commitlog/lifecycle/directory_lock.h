// SPDX-License-Identifier: Apache-2.0
// One owner per log directory. A log takes the lock file LOCK in its
// directory (the name RocksDB gives its own) through FileSystem::lock()
// before it lists or makes a segment, and holds it until close(): a second
// open of the directory, in this process or another, is refused at once.
// The lock is the kernel's, so a writer killed with kill -9 leaves no owner
// behind, only a LOCK file naming the dead process, which the next open
// takes over. Readers (the replayer, the tail reader, the tools) never take
// it; log_writer() tells them that a writer is live.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "commitlog/file_system.h"
#include "commitlog/status.h"

namespace commitlog {

inline constexpr char kLockFileName[] = "LOCK";

// `dir`/LOCK.
std::string lock_file_path(const std::string& dir);

// Takes the lock of the log directory `dir`, creating the lock file with
// `permissions`. A lock already held is kBusy naming the directory, the
// holder's process id where the lock file names it, and the lock file:
// "DIR: the commit log is already open in process 1234 (lock file DIR/LOCK)".
// REQUIRES: `dir` exists.
Result<std::unique_ptr<FileLock>> lock_log_directory(FileSystem& fs, const std::string& dir,
                                                     uint32_t permissions);

// The process id of the writer holding `dir` open now, 0 when its lock file
// names none; nullopt when no writer holds it, or when that cannot be told
// (no lock file, one that cannot be read).
std::optional<int64_t> log_writer(FileSystem& fs, const std::string& dir);

}  // namespace commitlog
