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
#include "tools/log_input.h"
#include "tools/progress.h"

namespace commitlog::tools {

// Adds `--mode strict|skip` to `cmd`, storing into `mode`.
void add_mode_option(CLI::App* cmd, std::string& mode, const std::string& default_mode);
RecoveryMode recovery_mode(const std::string& mode);

// 0 intact (torn tails allowed), 1 corruption found, 2 input error.
int exit_code_for(const ReplayReport& report);

// "corruption: FILE: offset N: KIND (B bytes skipped)" or
// "torn tail: FILE: offset N: KIND (B bytes dropped)".
std::string problem_line(const ReplayProblem& problem);
nlohmann::ordered_json problem_json(const ReplayProblem& problem);

// "2024-05-01T12:00:00.123456Z" (UTC) for µs since the epoch.
std::string format_time_us(uint64_t us);

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
