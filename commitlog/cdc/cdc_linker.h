// SPDX-License-Identifier: Apache-2.0
// The round's half of change data capture: links a segment whose tables
// include a CDC table into cdc_raw at its first durable flush, before that
// flush's waiters wake, and says what its idx file is to hold from then on.
//
// Threads: on_durable() by the round; the accessors on any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "commitlog/cdc/cdc_space.h"
#include "segment/storage/mapped_segment.h"

namespace commitlog {

// What a segment's `_cdc.idx` file is to say.
struct CdcIndexUpdate {
  std::string name;  // the segment's file name
  uint64_t offset = 0;
  bool finished = false;
  bool linked_now = false;  // the segment was linked by this flush: cdc_raw grew
};

class CdcLinker {
 public:
  // `fs`, `options` and `space` must outlive this.
  CdcLinker(FileSystem& fs, std::string dir, const CdcOptions& options, CdcSpace& space);

  // The update due after `segment` became durable up to `offset`: nullopt
  // when it holds no CDC table's mutation, failed to link, or its idx file
  // already says as much. Holds the segment in `space` from before its link
  // until the caller releases it, once its finished update is written.
  std::optional<CdcIndexUpdate> on_durable(const MappedSegment& segment, uint64_t offset);

  uint64_t linked() const { return linked_.load(); }
  uint64_t failures() const { return failures_.load(); }

 private:
  bool link(const MappedSegment& segment, const std::string& name);

  FileSystem& fs_;
  const std::string dir_;
  const CdcOptions& options_;
  CdcSpace& space_;
  std::map<uint64_t, uint64_t> linked_offsets_;  // linked, unfinished segments: the offset last due
  std::set<uint64_t> not_captured_;              // unfinished segments that failed to link
  std::atomic<uint64_t> linked_{0}, failures_{0};
};

}  // namespace commitlog
