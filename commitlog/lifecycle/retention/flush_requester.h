// SPDX-License-Identifier: Apache-2.0
// Over the soft limit, total_space (or 75% of the hard limit when there is
// none), the lifecycle thread calls on_flush_request with the tables dirty in
// the oldest segments that cover the excess (segment_registry.h): after each
// segment switch or finished segment, and again every second while over it
// -- the embedder should coalesce requests. The callback may call discard(),
// but must not close the log.
//
// Thread-safety: request() is the lifecycle thread's, and calls
// on_flush_request on it with no lock held; requests() any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>

#include "commitlog/clock.h"
#include "commitlog/lifecycle/retention/segment_registry.h"
#include "commitlog/options.h"

namespace commitlog {

class FlushRequester {
 public:
  // `registry` must outlive this object.
  FlushRequester(const Options& options, const SegmentRegistry& registry);

  // Asks for flushes if over the soft limit and a segment finished since the
  // last request, or a second passed. Returns when to look again without new
  // work: in a second while over the soft limit, else nullopt.
  std::optional<Duration> request();

  uint64_t soft_limit() const { return soft_limit_; }  // 0: none
  uint64_t requests() const { return requests_.load(); }  // calls of on_flush_request

 private:
  void ask(uint64_t excess);

  Clock& clock_;
  const SegmentRegistry& registry_;
  const uint64_t soft_limit_;
  const FlushRequest on_flush_request_;
  std::atomic<uint64_t> requests_{0};

  // Lifecycle-thread state.
  uint64_t finished_at_last_request_ = ~uint64_t{0};
  TimePoint last_request_{};
};

}  // namespace commitlog
