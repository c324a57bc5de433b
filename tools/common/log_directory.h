// SPDX-License-Identifier: Apache-2.0
// The directories the commands write into. A command never deletes or
// overwrites what it did not create, so before it writes a log it checks
// that the directory holds nothing but this log's segment files, its spare
// segment files and its lock file (LOCK), and it removes only what it made
// itself.
#pragma once

#include <string>

#include "commitlog/status.h"

namespace commitlog::tools {

// Ok when `dir` is missing, empty, or holds only segment files, spare
// segment files (CommitLog-<id>.spare) and the log's lock file; else
// kInvalidArgument naming the first other entry, e.g. "--dir /x holds
// notes.txt, which is not a commit log segment: give a new or empty
// directory, or one holding only a log". `flag` names the option ("--dir").
[[nodiscard]] Status check_log_directory(const std::string& flag, const std::string& dir);

}  // namespace commitlog::tools
