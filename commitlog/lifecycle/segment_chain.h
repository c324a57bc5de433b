// SPDX-License-Identifier: Apache-2.0
// The segments this process writes, in order: the active one that producers
// append to, and the older ones the rounds have not finished yet.
//
// Producers read active() without a lock. A producer whose reservation fails
// calls advance(), which (under the switch lock) closes the full segment and
// publishes the next one from the allocator. A producer may still hold the
// pointer of a segment that has since been closed, finished and retired: so
// whoever reads active() outside a round holds a pin() while it uses the
// pointer, and reclaim() frees a retired segment only once no pin that may
// have seen it remains (util/epoch_pins.h).
//
// Thread-safety: active(), pin() and advance() from any thread;
// unfinished(), retire_finished() and reclaim() by whoever holds the round
// (write/sync_thread.h), which needs no pin for the segments it was given.
#pragma once

#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include <boost/fiber/mutex.hpp>

#include "commitlog/lifecycle/segment_allocator.h"
#include "commitlog/util/epoch_pins.h"
#include "commitlog/util/mutex.h"

namespace commitlog {

class SegmentChain {
 public:
  // `on_switch` runs (without locks held) after each switch, to wake the sync
  // thread. `on_retired`, if set, runs in the round (without locks held)
  // for each segment retire_finished() retires, oldest first.
  SegmentChain(SegmentAllocator& allocator, std::function<void()> on_switch,
               std::function<void(MappedSegment&)> on_retired = {});

  // Takes the first segment. Must be called once before anything else.
  Status start();
  // Hold the pin for as long as the returned pointer (of active() or
  // advance()) is used, outside a round.
  [[nodiscard]] EpochPins::Pin pin() const { return pins_.pin(); }
  MappedSegment* active() const { return active_.load(std::memory_order_seq_cst); }
  uint64_t active_id() const {
    const EpochPins::Pin pinned = pin();
    return active()->id();
  }
  // Closes `full` (if still active) and activates the next segment. Returns
  // the active segment, or an error when allocation failed or the chain is shut.
  Result<MappedSegment*> advance(MappedSegment* full);
  // Refuses further switches and closes the active segment (for close()).
  void shut();

  // Ordinal of a segment of this chain: 0 for the first one.
  uint64_t ordinal(const MappedSegment& segment) const { return segment.id() - first_id_; }
  uint64_t first_id() const { return first_id_; }

  // The round: the segments not yet finished, oldest first.
  std::vector<MappedSegment*> unfinished() const;
  // The round: releases the files of finished segments, then hands each to
  // `on_retired`.
  void retire_finished();
  // The round, when it holds no pointer to a finished segment (no flush in
  // flight): frees the retired segments no pin can reach any more.
  void reclaim();
  uint64_t switches() const { return switches_.load(std::memory_order_relaxed); }

 private:
  SegmentAllocator& allocator_;
  const std::function<void()> on_switch_;
  const std::function<void(MappedSegment&)> on_retired_;
  const uint64_t first_id_;
  std::atomic<MappedSegment*> active_{nullptr};
  std::atomic<uint64_t> switches_{0};
  boost::fibers::mutex switch_mu_;  // serializes switches; never held by a round
  mutable Mutex mu_;
  std::deque<std::unique_ptr<MappedSegment>> unfinished_ GUARDED_BY(mu_);
  bool shut_ GUARDED_BY(mu_) = false;
  mutable EpochPins pins_;
  // The round's: retired segments, and those waiting for the grace period
  // begun with `draining_bank_` to end.
  std::vector<std::unique_ptr<MappedSegment>> retired_, draining_;
  size_t draining_bank_ = 0;
};

}  // namespace commitlog
