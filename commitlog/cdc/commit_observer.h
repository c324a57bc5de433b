// SPDX-License-Identifier: Apache-2.0
// The one place where a flush's durable offset becomes known, per segment:
// FlushPipeline tells a CommitObserver (if the log has one) each time a
// commit made a segment's entries durable up to an offset, before the
// producers waiting for them wake and before a finished segment is retired.
// Change data capture (cdc_writer.h) follows it to link segments into
// cdc_raw and keep their idx files.
#pragma once

#include <cstdint>

#include "segment/storage/mapped_segment.h"

namespace commitlog {

class CommitObserver {
 public:
  virtual ~CommitObserver() = default;
  // Every entry of `segment` below file image offset `offset` is durable, and
  // so is every entry of the segments before it; segment.finished() says
  // whether `offset` is its end. Its id(), path(), tables() and finished() may
  // be read during the call. Called by the round (the sync thread or a producer leading a flush), in flush order, with
  // offsets that never go back within a segment; must not block for long (it
  // delays every waiting producer).
  virtual void on_durable(const MappedSegment& segment, uint64_t offset) = 0;
};

}  // namespace commitlog
