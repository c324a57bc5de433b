// SPDX-License-Identifier: Apache-2.0
// Helpers for tests that write a log to a real directory and then look at or
// damage its files byte by byte, and replay a log.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "commitlog/commit_log.h"
#include "commitlog/options.h"
#include "commitlog/replayer.h"

namespace commitlog::testing {

// A batch log in `dir`: appends of `direct_write_threshold` bytes or more
// take the direct route.
Options batch_options(const std::string& dir, uint64_t segment_size, Compression compression,
                      uint64_t direct_write_threshold);

// The segment files of `dir`, oldest first.
std::vector<SegmentFile> segment_files(const std::string& dir);
std::vector<std::byte> read_file(const std::string& path);
void write_file(const std::string& path, const std::vector<std::byte>& bytes);
void flip_bit(const std::string& path, uint64_t offset, int bit = 0);
void write_text(const std::string& path, const std::string& text);
// The whole file; empty if it cannot be read.
std::string slurp(const std::string& path);

// The log `options` open, or the test case fails (REQUIRE) naming why.
std::unique_ptr<CommitLog> open_log(const Options& options);

// The seeds a randomised test case runs: COMMITLOG_SEED alone, to repeat a
// failure, or `runs` from `base`.
std::vector<uint64_t> seeds(uint64_t base, int runs);

struct Replayed {
  ReplayReport report;
  std::vector<std::string> payloads;
  std::vector<Position> positions;
  std::vector<uint32_t> tables;
};
Replayed replay_all(const std::string& dir, RecoveryMode mode = RecoveryMode::kTolerateTornTail);
// The same through `fs` (a crash image of a FaultFileSystem, say).
Replayed replay_all(FileSystem& fs, const std::string& dir, RecoveryMode mode = RecoveryMode::kTolerateTornTail);
// With any options (keys, say).
Replayed replay_with(const std::string& dir, const ReplayOptions& options);

}  // namespace commitlog::testing
