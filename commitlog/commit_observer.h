// What the sync thread tells others after each successful flush: how far each
// segment it may have covered is durable now. Change data capture
// (cdc_writer.h) publishes that in cdc_raw.
#pragma once

#include <span>

#include "segment/mapped_segment.h"

namespace commitlog {

class CommitObserver {
 public:
  virtual ~CommitObserver() = default;
  // Sync thread, after a flush succeeded and before its waiters wake: the
  // segments not retired yet, oldest first. Each one's durable_offset(),
  // finished() and tables() may be read during the call. Must not block for
  // long: every producer waiting for durability waits for it.
  virtual void committed(std::span<MappedSegment* const> segments) = 0;
};

}  // namespace commitlog
