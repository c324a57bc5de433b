#include "tools/report_format.h"

#include <algorithm>
#include <ctime>

#include <fmt/core.h>

#include "tools/commands.h"

namespace commitlog::tools {

void add_mode_option(CLI::App* cmd, std::string& mode, const std::string& default_mode) {
  mode = default_mode;
  cmd->add_option("--mode", mode,
                  "strict: stop at the first corruption; skip: pass over damage and go on")
      ->check(CLI::IsMember({"strict", "skip"}))
      ->capture_default_str();
}

RecoveryMode recovery_mode(const std::string& mode) {
  return mode == "skip" ? RecoveryMode::kSkip : RecoveryMode::kStrict;
}

int exit_code_for(const ReplayReport& report) {
  if (!report.status.ok()) {
    return report.status.code() == ErrorCode::kCorruption ? kExitCorruption : kExitUsage;
  }
  return report.corruptions > 0 ? kExitCorruption : kExitOk;
}

std::string problem_line(const ReplayProblem& problem) {
  return fmt::format("{}: {}: offset {}: {} ({} bytes {})",
                     problem.corruption ? "corruption" : "torn tail", problem.file, problem.offset,
                     problem.kind, problem.bytes, problem.corruption ? "skipped" : "dropped");
}

nlohmann::ordered_json problem_json(const ReplayProblem& problem) {
  return {{"file", problem.file},
          {"offset", problem.offset},
          {"kind", problem.kind},
          {"bytes", problem.bytes},
          {"corruption", problem.corruption}};
}

std::string format_time_us(uint64_t us) {
  const auto seconds = static_cast<std::time_t>(us / 1000000);
  std::tm tm{};
  ::gmtime_r(&seconds, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:06}Z", tm.tm_year + 1900, tm.tm_mon + 1,
                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, us % 1000000);
}

int input_error(const char* command, const Status& status) {
  fmt::print(stderr, "commitlog {}: {}\n", command, status.message());
  return kExitUsage;
}

ReplayProgress::ReplayProgress(std::string label, const std::vector<LogFile>& files)
    : files_(files), offsets_(byte_offsets(files)), progress_(std::move(label), offsets_.total) {}

void ReplayProgress::seek(uint64_t segment) {
  segment_ = segment;
  auto it = std::lower_bound(files_.begin(), files_.end(), segment,
                             [](const LogFile& f, uint64_t id) { return f.id < id; });
  const auto i = static_cast<size_t>(std::min(it - files_.begin(), static_cast<ptrdiff_t>(files_.size()) - 1));
  base_ = offsets_.start[i];
  size_ = files_[i].size;
}

}  // namespace commitlog::tools
