// SPDX-License-Identifier: Apache-2.0
// The read-only commands (dump, verify, replay, stat, tail) never take a log
// directory's lock (commitlog/lifecycle/directory_lock.h), so they work beside a live
// writer; they say so when they read one, since its newest segment may
// still be growing while they read it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace commitlog::tools {

// When a writer holds the log directory `dir` open, says so on stderr,
// "commitlog COMMAND: note: DIR is open for writing by process PID; its
// newest segment may still be growing", and returns the writer's process id
// (0 when its lock file names none).
std::optional<int64_t> note_live_writer(const char* command, const std::string& dir);

// The same for the directories `paths` name: each directory, and the
// directory of each file, once.
void note_live_writers(const char* command, const std::vector<std::string>& paths);

}  // namespace commitlog::tools
