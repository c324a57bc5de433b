// SPDX-License-Identifier: Apache-2.0
// What the offline commands share when they replay a log: the --mode option,
// the exit code a report earns, how a problem is printed, and progress by
// replay position. The contract they print to is in docs/tools.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "commitlog/replayer.h"
#include "tools/cli/log_input.h"
#include "tools/common/progress.h"

namespace commitlog::tools {

// Adds `--mode tolerate-torn-tail|absolute|point-in-time|skip` to `cmd`,
// storing into `mode` ("strict" is taken for tolerate-torn-tail).
void add_mode_option(CLI::App* cmd, RecoveryMode& mode, RecoveryMode default_mode);

// 0 intact (torn tails allowed, unless the mode refused them), 1 damage
// found that lost data or that the mode refused, 2 input error.
int exit_code_for(const ReplayReport& report);

// "corruption: FILE: offset N: KIND (B bytes skipped)" or
// "torn tail: FILE: offset N: KIND (B bytes dropped)", plus for damaged
// compressed sections "; file bytes F..G".
std::string problem_line(const ReplayProblem& problem);
nlohmann::ordered_json problem_json(const ReplayProblem& problem);

// "2024-05-01T12:00:00.123456Z" (UTC) for µs since the epoch.
std::string format_time_us(uint64_t us);
// µs since the epoch from what format_time_us prints (the fraction and the
// Z optional), Cassandra's restore_point_in_time form "yyyy:MM:dd
// HH:mm:ss[.SSS]" (UTC), or a plain number of µs.
Result<uint64_t> parse_time_us(const std::string& text);

// Prints "commitlog COMMAND: MESSAGE" on stderr and returns kExitUsage.
int input_error(const char* command, const Status& status);

// Drives a Progress bar from the positions a replay hands out.
class ReplayProgress {
 public:
  ReplayProgress(std::string label, const std::vector<LogFile>& files);
  void update(const Position& position) {
    if (position.segment != segment_) seek(position.segment);
    // A compressed segment's positions are image offsets, which may run past its file size.
    progress_.update(base_ + (position.offset < size_ ? position.offset : size_));
  }
  void finish() { progress_.finish(); }

 private:
  void seek(uint64_t segment);

  const std::vector<LogFile>& files_;
  ByteOffsets offsets_;
  Progress progress_;
  uint64_t segment_ = UINT64_MAX;
  uint64_t base_ = 0;
  uint64_t size_ = 0;
};

}  // namespace commitlog::tools
