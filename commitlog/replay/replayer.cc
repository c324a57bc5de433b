// SPDX-License-Identifier: Apache-2.0
#include "commitlog/replayer.h"

#include <algorithm>

#include "commitlog/replay/segment_replay.h"
#include "segment/file_name.h"

namespace commitlog {

const char* recovery_mode_name(RecoveryMode mode) {
  switch (mode) {
    case RecoveryMode::kTolerateTornTail: return "tolerate-torn-tail";
    case RecoveryMode::kAbsolute: return "absolute";
    case RecoveryMode::kPointInTime: return "point-in-time";
    case RecoveryMode::kSkip: return "skip";
  }
  return "unknown";
}

std::optional<RecoveryMode> parse_recovery_mode(std::string_view name) {
  for (RecoveryMode mode : {RecoveryMode::kTolerateTornTail, RecoveryMode::kAbsolute,
                            RecoveryMode::kPointInTime, RecoveryMode::kSkip}) {
    if (name == recovery_mode_name(mode)) return mode;
  }
  if (name == "strict") return RecoveryMode::kTolerateTornTail;
  return std::nullopt;
}

Result<std::vector<SegmentFile>> list_segment_files(FileSystem& fs, const std::string& dir) {
  if (!fs.exists(dir)) return Status::not_found(dir + ": no such directory");
  if (!fs.is_directory(dir)) return Status::invalid_argument(dir + ": not a directory");
  auto names = fs.list(dir);
  if (!names.ok()) return names.status();
  std::vector<SegmentFile> files;
  for (const auto& name : *names) {
    auto id = parse_segment_file_name(name);
    if (!id.ok()) return Status::invalid_argument(dir + "/" + id.status().message());
    if (*id) files.push_back({**id, dir + "/" + name});
  }
  std::sort(files.begin(), files.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  return files;
}

ReplayReport replay_directory(const std::string& dir, const ReplayOptions& options,
                              const ReplayHandler& handler) {
  if (!options.file_system->exists(dir)) return ReplayReport{};
  auto files = list_segment_files(*options.file_system, dir);
  if (!files.ok()) {
    ReplayReport report;
    report.status = files.status();
    return report;
  }
  return replay_segment_files(*files, options, handler);
}

ReplayReport replay_segment_files(const std::vector<SegmentFile>& files, const ReplayOptions& options,
                                  const ReplayHandler& handler) {
  ReplayReport report;
  std::vector<SegmentPrologue> prologues;
  for (const SegmentFile& file : files) {
    auto p = read_prologue(*options.file_system, file);
    if (!p.ok()) {
      report.status = p.status();
      return report;
    }
    if (p->problem == HeaderProblem::kUnknownVersion || p->problem == HeaderProblem::kUnknownFlags) {
      report.status = Status::invalid_argument(file.path + ": " + header_problem_name(p->problem));
      return report;
    }
    prologues.push_back(std::move(p).value());
  }
  mark_run_ends(prologues);
  SegmentReplay replay(options, handler, report);
  for (size_t i = 0; i < prologues.size(); ++i) {
    if (options.from && prologues[i].file.id < options.from->segment) continue;
    if (!replay.replay(prologues[i])) {
      report.unread_segments = prologues.size() - i - 1;
      break;
    }
  }
  return report;
}

}  // namespace commitlog
