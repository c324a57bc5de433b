// SPDX-License-Identifier: Apache-2.0
// Brings each retained segment (segment_registry.h) to where only discards
// decide its fate: its tables known and its size on disk measured, sealed,
// and archived when archiving is on.
//
// Learning. Segments from before this process ("old" segments: every file in
// the directory at open) count against the limits from the start and are read
// once, on the lifecycle thread, to learn their tables
// (replay/segment_tables.h). An old segment found damaged is never deleted;
// it is printed once on stderr and left to the operator. One that was never
// written (all zeros) holds no table. A compressed segment of this process
// is measured on disk once finished.
//
// Sealing. Each segment this process finishes is sealed before it is
// archived; a seal that cannot be written is reported and leaves the segment
// as a crash would, its tail unproved.
//
// Archiving. The archive hook runs once per segment; a failed one is
// reported and counted, and keeps the segment.
//
// Thread-safety: learn(), seal() and archive() are the lifecycle thread's
// (the archive hook runs on it with no lock held); the counters any thread's.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "commitlog/lifecycle/retention/segment_registry.h"
#include "commitlog/options.h"

namespace commitlog {

class SegmentSettler {
 public:
  // `archive` may be empty (no archiving). `registry` must outlive this object.
  SegmentSettler(const Options& options, ArchiveHook archive, SegmentRegistry& registry);

  void learn();
  void seal();
  void archive();

  uint64_t archived() const { return archived_.load(); }  // archive commands that succeeded
  uint64_t archive_failures() const { return archive_failures_.load(); }

 private:
  FileSystem& fs_;
  const std::shared_ptr<const KeyProvider> keys_;  // to read the tables of encrypted segments
  const ArchiveHook archive_;
  SegmentRegistry& registry_;
  std::vector<std::byte> buffer_;  // lifecycle-thread state
  std::atomic<uint64_t> archived_{0}, archive_failures_{0};
};

}  // namespace commitlog
