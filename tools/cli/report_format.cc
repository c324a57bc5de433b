// SPDX-License-Identifier: Apache-2.0
#include "tools/cli/report_format.h"

#include <algorithm>
#include <charconv>
#include <ctime>

#include <fmt/core.h>

#include "commitlog/lifecycle/archiver.h"
#include "tools/common/commands.h"
#include "tools/common/recovery_mode_option.h"

namespace commitlog::tools {

void add_mode_option(CLI::App* cmd, RecoveryMode& mode, RecoveryMode default_mode) {
  mode = default_mode;
  cmd->add_option_function<std::string>(
         "--mode", [&mode](const std::string& name) { mode = *parse_recovery_mode(name); },
         "at damage: tolerate-torn-tail (stop at corruption), absolute (stop at any damage), "
         "point-in-time (stop at corruption: no error from the library, still exit 1 here), skip (pass over "
         "damage and go on)")
      ->check(check_recovery_mode)
      ->default_str(recovery_mode_name(default_mode));
}

int exit_code_for(const ReplayReport& report) {
  if (report.intact()) return kExitOk;
  if (!report.status.ok() && report.status.code() != ErrorCode::kCorruption) return kExitUsage;
  return kExitCorruption;
}

std::string problem_line(const ReplayProblem& problem) {
  const std::string stored =
      problem.stored_bytes == 0
          ? ""
          : fmt::format("; file bytes {}..{}", problem.stored_offset, problem.stored_offset + problem.stored_bytes);
  return fmt::format("{}: {}: offset {}: {} ({} bytes {}{})",
                     problem.corruption ? "corruption" : "torn tail", problem.file, problem.offset,
                     problem.kind, problem.bytes, problem.corruption ? "skipped" : "dropped", stored);
}

nlohmann::ordered_json problem_json(const ReplayProblem& problem) {
  nlohmann::ordered_json j = {{"file", problem.file},
                              {"offset", problem.offset},
                              {"kind", problem.kind},
                              {"bytes", problem.bytes},
                              {"corruption", problem.corruption}};
  if (problem.stored_bytes > 0) {
    j["stored_offset"] = problem.stored_offset;
    j["stored_bytes"] = problem.stored_bytes;
  }
  return j;
}

std::string format_time_us(uint64_t us) {
  const auto seconds = static_cast<std::time_t>(us / 1000000);
  std::tm tm{};
  ::gmtime_r(&seconds, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:06}Z", tm.tm_year + 1900, tm.tm_mon + 1,
                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, us % 1000000);
}

Result<uint64_t> parse_time_us(const std::string& text) {
  uint64_t us = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), us);
  if (!text.empty() && ec == std::errc() && end == text.data() + text.size()) return us;
  // ISO 8601 as format_time_us prints it, rewritten to Cassandra's form.
  std::string cassandra = text;
  if (cassandra.size() >= 19 && cassandra[4] == '-' && cassandra[7] == '-' && cassandra[10] == 'T') {
    cassandra[4] = cassandra[7] = ':';
    cassandra[10] = ' ';
    if (cassandra.back() == 'Z') cassandra.pop_back();
  }
  auto parsed = parse_restore_point(cassandra);
  if (parsed.ok()) return parsed;
  return Status::invalid_argument(
      "'" + text + "' is not a time: expected 2024-05-01T12:00:00[.123456]Z, 2024:05:01 12:00:00[.123] (UTC) "
      "or microseconds since the epoch");
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
