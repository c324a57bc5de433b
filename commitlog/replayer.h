// Replays the segments of a directory after a crash: lists them, orders them
// by id, verifies header, markers and entries, and calls a handler with each
// intact mutation, in log order.
//
// What counts as normal and what as corruption:
//  - The torn tail at the end of each process's run of segments (what follows
//    the last valid marker of the newest segment that process wrote, and any
//    later, never-sealed segments of that run) is a normal end; its bytes are
//    counted in torn_tail_bytes.
//    In segments with format::kFlagSyncedMarks, damage in that newest
//    segment is a torn tail too when no valid marker after it records a
//    flush that covered it (SegmentDamage::unflushed).
//  - Damage anywhere else is corruption: a bad header, marker or entry
//    checksum, or valid sealed data after a damaged region.
//  - RecoveryMode::kStrict stops at the first corruption with an error naming
//    the file, the offset and what is wrong. kSkip skips the damaged part,
//    counts it, and goes on. Neither ever hands out a payload whose checksum
//    failed.
//  - A file named like a segment that is not one (wrong magic, too short,
//    unknown version) is an input error in both modes.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "commitlog/position.h"
#include "commitlog/file_system.h"
#include "commitlog/status.h"

namespace commitlog {

enum class RecoveryMode {
  kStrict,  // stop at the first corruption: the operator decides
  kSkip,    // skip damaged sections and go on: availability first
};

struct ReplayOptions {
  RecoveryMode mode = RecoveryMode::kStrict;
  std::optional<Position> from;  // skip everything before this position
  // Per table, skip its mutations at positions before this one: what the
  // table already persisted (e.g. its last discard position, plus one).
  std::map<uint32_t, Position> table_start;
  // Skip mutations written after this time (µs since the epoch): a
  // point-in-time restore. Entries are in log order, not strictly in time
  // order, so later ones are still read.
  std::optional<uint64_t> cutoff_time_us;
  FileSystem* file_system = posix_file_system();
};

struct ReplayedMutation {
  Position position;
  uint32_t table = 0;
  uint64_t time_us = 0;  // wall clock when appended, µs since the epoch
  std::span<const std::byte> payload;  // valid only during the handler call
};

// One finding, in log order.
struct ReplayProblem {
  std::string file;
  uint64_t offset = 0;
  std::string kind;        // e.g. "bad payload checksum", "torn tail"
  uint64_t bytes = 0;      // bytes skipped or dropped
  bool corruption = true;  // false for a normal torn tail or unused segment
};

struct ReplayReport {
  Status status;  // ok, or the first corruption (strict) / input error
  uint64_t segments = 0;
  uint64_t mutations = 0;
  uint64_t filtered_mutations = 0;  // intact, skipped by table_start or cutoff_time_us
  uint64_t payload_bytes = 0;
  uint64_t bytes_read = 0;
  uint64_t skipped_bytes = 0;    // damaged bytes passed over (skip mode)
  uint64_t torn_tail_bytes = 0;  // unsealed bytes dropped at a run's end
  uint64_t corruptions = 0;
  std::vector<ReplayProblem> problems;
  std::optional<Position> last_position;
};

// Called with each intact mutation; a non-ok Status stops the replay with it.
using ReplayHandler = std::function<Status(const ReplayedMutation&)>;

ReplayReport replay_directory(const std::string& dir, const ReplayOptions& options,
                              const ReplayHandler& handler);


// The segment files of `dir` (by name), ordered by id.
struct SegmentFile {
  uint64_t id = 0;
  std::string path;
};
Result<std::vector<SegmentFile>> list_segment_files(FileSystem& fs, const std::string& dir);

// Replays `files`, ordered by id, as one log: replay_directory for segment
// files from several directories (commitlog/archiver.h restores this way).
ReplayReport replay_segment_files(const std::vector<SegmentFile>& files, const ReplayOptions& options,
                                  const ReplayHandler& handler);

}  // namespace commitlog
