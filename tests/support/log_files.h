// Helpers for tests that write a log to a real directory and then look at or
// damage its files byte by byte.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "commitlog/replayer.h"

namespace commitlog::testing {

// The segment files of `dir`, oldest first.
std::vector<SegmentFile> segment_files(const std::string& dir);
std::vector<std::byte> read_file(const std::string& path);
void write_file(const std::string& path, const std::vector<std::byte>& bytes);
void flip_bit(const std::string& path, uint64_t offset, int bit = 0);

struct Replayed {
  ReplayReport report;
  std::vector<std::string> payloads;
  std::vector<Position> positions;
  std::vector<uint32_t> tables;
};
Replayed replay_all(const std::string& dir, RecoveryMode mode = RecoveryMode::kTolerateTornTail);

}  // namespace commitlog::testing
