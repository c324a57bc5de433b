// The one place where a flush's durable offset becomes known, per segment:
// FlushPipeline tells a CommitObserver (if the log has one) each time a
// commit made a segment's entries durable up to an offset, before the
// producers waiting for them wake. What a change-data-capture reader or a
// live tail follows.
#pragma once

#include <cstdint>

namespace commitlog {

class CommitObserver {
 public:
  virtual ~CommitObserver() = default;
  // Every entry of segment `segment_id` below file image offset `offset` is
  // durable, and so is every entry of the segments before it. Called on the
  // sync thread, in flush order, with offsets that never go back within a
  // segment; must not block (it delays every waiting producer).
  virtual void on_durable(uint64_t segment_id, uint64_t offset) = 0;
};

}  // namespace commitlog
