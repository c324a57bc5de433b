// SPDX-License-Identifier: Apache-2.0
// The segments this process writes, in order: the active one that producers
// append to, and the older ones the sync thread has not finished yet.
//
// Producers read active() without a lock. A producer whose reservation fails
// calls advance(), which (under the switch lock) closes the full segment and
// publishes the next one from the allocator. Segment objects stay alive until
// the chain is destroyed, so a producer holding a stale pointer only ever
// touches a closed segment's atomic allocation offset, never freed memory.
// That holds after the segment's file is deleted too (segment_lifecycle.h):
// a retired segment keeps only its bookkeeping, a few hundred bytes.
//
// Thread-safety: active() and advance() from any thread; unfinished() and
// retire_finished() from the sync thread.
#pragma once

#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include <boost/fiber/mutex.hpp>

#include "commitlog/segment_allocator.h"

namespace commitlog {

class SegmentChain {
 public:
  // `on_switch` runs (without locks held) after each switch, to wake the sync
  // thread. `on_retired`, if set, runs on the sync thread (without locks held)
  // for each segment retire_finished() retires, oldest first.
  SegmentChain(SegmentAllocator& allocator, std::function<void()> on_switch,
               std::function<void(MappedSegment&)> on_retired = {});

  // Takes the first segment. Must be called once before anything else.
  Status start();
  MappedSegment* active() const { return active_.load(std::memory_order_acquire); }
  // Closes `full` (if still active) and activates the next segment. Returns
  // the active segment, or an error when allocation failed or the chain is shut.
  Result<MappedSegment*> advance(MappedSegment* full);
  // Refuses further switches and closes the active segment (for close()).
  void shut();

  // Ordinal of a segment of this chain: 0 for the first one.
  uint64_t ordinal(const MappedSegment& segment) const { return segment.id() - first_id_; }
  uint64_t first_id() const { return first_id_; }

  // Sync thread: the segments not yet finished, oldest first.
  std::vector<MappedSegment*> unfinished() const;
  // Sync thread: releases the files of finished segments, then hands each to
  // `on_retired`.
  void retire_finished();
  uint64_t switches() const { return switches_.load(std::memory_order_relaxed); }

 private:
  SegmentAllocator& allocator_;
  const std::function<void()> on_switch_;
  const std::function<void(MappedSegment&)> on_retired_;
  const uint64_t first_id_;
  std::atomic<MappedSegment*> active_{nullptr};
  std::atomic<uint64_t> switches_{0};
  boost::fibers::mutex switch_mu_;  // serializes switches; never held by the sync thread
  mutable std::mutex mu_;
  std::deque<std::unique_ptr<MappedSegment>> segments_;  // guarded by mu_
  size_t first_unfinished_ = 0;                          // guarded by mu_
  bool shut_ = false;                                    // guarded by mu_
};

}  // namespace commitlog
