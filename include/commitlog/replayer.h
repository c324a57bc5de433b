// SPDX-License-Identifier: Apache-2.0
// Public API. Replays the segments of a directory after a crash: lists them,
// orders them by id, checks headers, markers and entries, and calls a handler
// with each intact mutation, in log order. It never hands out a payload
// whose checksum failed.
//
// Torn tail or corruption. Each process writes a run of segments. A crash
// may tear what the last flushes of a run were writing, so damage in the
// newest segment of a run is a torn tail when nothing durable can lie beyond
// it: no later valid marker records a synced offset past it, no later
// compressed flush follows it, and the file is not shorter than the writer
// made it (segment/FORMAT.md, "Replay"). Anything else is corruption: damage
// in an older segment, damage a later write proves durable, a truncated
// file, a damaged segment header. One case cannot be told from loss by any
// reader: zeros from a point after the last valid marker to the end of the
// file read as the clean end of a crashed log (docs/recovery.md).
//
// A file named like a segment whose header is intact but of a format version
// or with flags this build does not read is an input error (invalid
// argument), in every mode: nothing is replayed.
#pragma once

// One clear message instead of a page of errors from C++20 library features.
#if __cplusplus < 202002L
#error "commitlog needs C++20: compile with -std=c++20 or later"
#else

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "commitlog/export.h"
#include "commitlog/file_system.h"
#include "commitlog/key_provider.h"
#include "commitlog/position.h"
#include "commitlog/status.h"

namespace commitlog {

// What a replay does at damage (RocksDB's WAL recovery modes).
enum class RecoveryMode {
  // A torn tail is dropped, counted and reported; at corruption the replay
  // stops with an error naming the file, the offset and the kind, after
  // delivering every intact mutation before it. For a store that must not
  // start on a log that lost acknowledged writes: the operator decides.
  kTolerateTornTail,
  // Any damage stops the replay with an error, a torn tail too. For logs that
  // were closed cleanly: a restored backup, a copy, a test.
  kAbsolute,
  // Stops at the first corruption without an error: everything before it is
  // delivered, and the report says where it stopped and what was left unread.
  // A torn tail ends its run as in kTolerateTornTail. For a replica that
  // fetches what is missing from its peers: a consistent prefix is what it needs.
  kPointInTime,
  // Passes over damage, resuming at the next valid marker or compressed
  // section, and delivers every intact mutation after it, also in the newest
  // segment. Availability first: some lost writes are better than no start.
  kSkip,
};
// "tolerate-torn-tail", "absolute", "point-in-time", "skip".
COMMITLOG_EXPORT const char* recovery_mode_name(RecoveryMode mode);
// The mode with that name; "strict" is the earlier name of tolerate-torn-tail.
COMMITLOG_EXPORT std::optional<RecoveryMode> parse_recovery_mode(std::string_view name);

struct COMMITLOG_EXPORT ReplayOptions {
  RecoveryMode mode = RecoveryMode::kTolerateTornTail;
  std::optional<Position> from;  // skip everything before this position
  // Per table, skip its mutations at positions before this one: what the
  // table already persisted (e.g. its last discard position, plus one).
  std::map<uint32_t, Position> table_start;
  // Skip mutations written after this time (µs since the epoch): a
  // point-in-time restore. Entries are in log order, not strictly in time
  // order, so later ones are still read.
  std::optional<uint64_t> cutoff_time_us;
  FileSystem* file_system = posix_file_system();
  // The master keys of encrypted segments (docs/encryption.md). An encrypted
  // segment whose key is missing, or does not unwrap its data key, stops the
  // replay with an error naming the segment and the key id.
  std::shared_ptr<const KeyProvider> keys;
  // Without keys, check only the framing of encrypted segments (key block,
  // section or entry headers, stored checksums), list them in ReplayReport::unopened
  // and go on: what `commitlog verify` does without --key-file.
  bool framing_only = false;
};

struct COMMITLOG_EXPORT ReplayedMutation {
  Position position;
  uint32_t table = 0;
  uint64_t time_us = 0;  // wall clock when appended, µs since the epoch
  std::span<const std::byte> payload;  // valid only during the handler call
};

// One finding, in log order. [offset, offset + bytes) is the exact range of
// positions passed over: skipped (corruption) or dropped (torn tail); in a
// compressed segment, offsets in its image, which are its positions.
struct COMMITLOG_EXPORT ReplayProblem {
  std::string file;
  uint64_t offset = 0;
  std::string kind;        // e.g. "bad payload checksum", "file truncated"
  uint64_t bytes = 0;
  bool corruption = true;  // false for a torn tail or an unused segment
  // Compressed segments, when damaged sections are the cause: their bytes in
  // the file, [stored_offset, stored_offset + stored_bytes).
  uint64_t stored_offset = 0;
  uint64_t stored_bytes = 0;
};

struct COMMITLOG_EXPORT ReplayReport {
  Status status;  // ok, or why the replay stopped early (damage the mode refuses, input, handler)
  uint64_t segments = 0;
  uint64_t mutations = 0;
  uint64_t filtered_mutations = 0;  // intact, skipped by table_start or cutoff_time_us
  uint64_t payload_bytes = 0;
  uint64_t bytes_read = 0;
  uint64_t skipped_bytes = 0;    // bytes of corruption passed over (kSkip)
  uint64_t torn_tail_bytes = 0;  // bytes of torn tails dropped
  uint64_t corruptions = 0;
  std::vector<ReplayProblem> problems;
  std::optional<Position> last_position;
  // Where damage stopped the replay before the end of the log (every mode
  // but kSkip), and the segment files after that one it did not read.
  std::optional<Position> stopped_at;
  uint64_t unread_segments = 0;
  // Segment files that end a run and hold data but carry no seal
  // (segment/FORMAT.md, "Seals"): their writer crashed and no process has opened
  // the log since, or they predate seals. Nothing records where their data
  // ended, so damage that removed their last entries cleanly cannot be told
  // from their end.
  std::vector<std::string> unproved_tails;
  // Encrypted segment files whose contents were not checked, as no keys
  // were given (ReplayOptions::framing_only): only their framing was.
  std::vector<std::string> unopened;
  // Of those, the entries sealed one by one that their framing and stored
  // checksums showed intact: counted here, not in `mutations` (mutations in
  // sealed sections cannot be counted without the key).
  uint64_t unopened_mutations = 0;

  // No corruption and no error: every mutation that was durable was
  // delivered, as far as the bytes can tell (what `commitlog verify` exits 0 on).
  bool intact() const { return status.ok() && corruptions == 0; }
};

// Called with each intact mutation; a non-ok Status stops the replay with it.
// It reports failure that way, never by throwing (an exception leaves the
// replay through its caller, its report lost).
using ReplayHandler = std::function<Status(const ReplayedMutation&)>;

// A directory that does not exist holds an empty log: nothing to replay.
COMMITLOG_EXPORT ReplayReport replay_directory(const std::string& dir, const ReplayOptions& options,
                              const ReplayHandler& handler);

// The segment files of `dir` (by name), ordered by id. Fails for a missing
// directory, and for a name that looks like a segment's but does not parse.
struct COMMITLOG_EXPORT SegmentFile {
  uint64_t id = 0;
  std::string path;
};
COMMITLOG_EXPORT Result<std::vector<SegmentFile>> list_segment_files(FileSystem& fs, const std::string& dir);

// Replays `files`, ordered by id, as one log: replay_directory for segment
// files from several directories (commitlog/lifecycle/archiver.h restores this way).
COMMITLOG_EXPORT ReplayReport replay_segment_files(const std::vector<SegmentFile>& files, const ReplayOptions& options,
                                  const ReplayHandler& handler);

}  // namespace commitlog

#endif  // C++20
