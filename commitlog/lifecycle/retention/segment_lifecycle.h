// SPDX-License-Identifier: Apache-2.0
// What happens to a segment after it is written: it is archived (when
// archiving is on), deleted once every table it holds is discarded, and
// counted against the log's space limits. This facade composes the parts,
// each in its own file:
//
//   segment_registry.h   the retained segments, the discards, the rule that
//                        makes a segment due for deletion, and the space
//   segment_settler.h    old segments read, finished ones sealed, archived
//   segment_reclaimer.h  segments due deleted or recycled as spares
//   flush_requester.h    on_flush_request over the soft limit, total_space
//   ../space_throttle.h  back-pressure under the hard limit, measured by
//                        SegmentRegistry::pressure_bytes()
//   lifecycle_thread.h   the thread that runs a pass of the first four
//
// Threads: the lifecycle thread (its own) reads old segments, runs archive
// commands, deletes, and calls on_flush_request with no lock held.
// on_finished() is called by the round, discard() and the accessors by
// any thread, admit() and notify_switch() by producers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "commitlog/lifecycle/retention/flush_requester.h"
#include "commitlog/lifecycle/retention/lifecycle_thread.h"
#include "commitlog/lifecycle/retention/segment_reclaimer.h"
#include "commitlog/lifecycle/retention/segment_registry.h"
#include "commitlog/lifecycle/retention/segment_settler.h"
#include "commitlog/lifecycle/segment_chain.h"
#include "commitlog/lifecycle/space_throttle.h"
#include "commitlog/lifecycle/spare_segments.h"
#include "commitlog/options.h"
#include "commitlog/position.h"

namespace commitlog {

struct LifecycleCounters {
  uint64_t segments = 0;          // files of the log now, the active one included
  uint64_t total_bytes = 0;       // total_bytes()
  uint64_t deleted = 0;           // segments deleted
  uint64_t recycled = 0;          // segments made spares instead
  uint64_t spares = 0;            // spare files kept now
  uint64_t archived = 0;          // archive commands that succeeded
  uint64_t archive_failures = 0;  // ... that failed: those segments are kept
  uint64_t delete_failures = 0;   // removals that failed: those segments are kept
  uint64_t flush_requests = 0;    // calls of on_flush_request
};

class SegmentLifecycle {
 public:
  // `archive` may be empty (no archiving). `chain` and `spares` (may be
  // null: no recycling) must outlive this object.
  SegmentLifecycle(const Options& options, ArchiveHook archive, const SegmentChain& chain,
                   SpareSegments* spares = nullptr);
  ~SegmentLifecycle();  // stop()

  SegmentLifecycle(const SegmentLifecycle&) = delete;
  SegmentLifecycle& operator=(const SegmentLifecycle&) = delete;

  // Lists the old segments (ids below the chain's first) and starts the
  // thread. Call once, after the chain has started.
  [[nodiscard]] Status start();
  // Wakes producers waiting for space (kClosed from then on), runs a last
  // pass -- archiving and deleting what is due -- and stops the thread. Call
  // after the sync thread stopped, so that every segment is finished.
  // Idempotent.
  void stop();
  // Whether the caller runs on this object's thread (in one of the
  // embedder's callbacks), which stop() would wait for.
  bool on_own_thread() const { return thread_.on_own_thread(); }

  // The round: `segment` is finished and its file released.
  void on_finished(const MappedSegment& segment);
  // A producer switched segments: the sizes changed. (A segment may finish
  // before the next one is active, so on_finished() alone is not enough.)
  void notify_switch() { thread_.wake(); }
  // After stop(), once the allocator has stopped (so no segment after it is
  // left to name it as previous): the last segment, if it holds no entry,
  // becomes a spare.
  void park_empty_last();
  // Everything of `table` at positions <= up_to is persisted elsewhere.
  void discard(uint32_t table, Position up_to);
  // Producers: back-pressure under the hard limit.
  [[nodiscard]] Status admit(TimePoint deadline) { return throttle_.admit(deadline); }

  uint64_t total_bytes() const { return registry_.total_bytes(); }
  LifecycleCounters counters() const;
  ThrottleCounters throttle_counters() const { return throttle_.counters(); }

 private:
  std::optional<Duration> pass();

  FileSystem& fs_;
  const std::string dir_;
  const SegmentChain& chain_;
  SegmentRegistry registry_;
  FlushRequester requester_;
  SpaceThrottle throttle_;
  SegmentSettler settler_;
  SegmentReclaimer reclaimer_;
  LifecycleThread thread_;  // last: stopped first, its passes use the others
};

}  // namespace commitlog
