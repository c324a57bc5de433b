// SPDX-License-Identifier: Apache-2.0
// Graded back-pressure under the hard limit on the log's size
// (commitlog_ext_total_space_hard_limit), so producers slow down before they
// stop, instead of running into a wall (scylladb#9053: 20 s stalls):
//
//   log bytes below 90% of the limit   admitted at once (one relaxed load)
//   from 90% up to the limit           delayed, linearly from 0 to max_delay
//   at or above the limit              wait until space is freed, the
//                                      deadline passes (kTimedOut), or the
//                                      log closes (kClosed)
//
// A delay never refuses an append: it ends at the deadline at the latest and
// the append goes on. Only the wait for space can time out, and then nothing
// was written. Delays and waits suspend only the calling fiber (a plain
// thread blocks).
//
// Thread-safety: every member may be called from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>

#include <boost/fiber/condition_variable.hpp>

#include "commitlog/util/clock_wait.h"
#include "commitlog/status.h"

namespace commitlog {

struct ThrottleCounters {
  uint64_t delayed = 0;       // appends delayed in the 90..100% band
  uint64_t delay_nanos = 0;   // time they spent delayed
  uint64_t waits = 0;         // appends that waited at the limit
  uint64_t wait_nanos = 0;    // time they spent waiting
  uint64_t timeouts = 0;      // waits that ended at their deadline
  uint64_t waiting = 0;       // producers waiting now
};

class SpaceThrottle {
 public:
  // The log's size for back-pressure, in bytes; called by producers, cheap.
  using Measure = std::function<uint64_t()>;
  // `hard_limit` 0 turns the throttle off. Delays and deadlines are on
  // `clock`, which must outlive the throttle.
  SpaceThrottle(Clock& clock, uint64_t hard_limit, Duration max_delay, Measure measure);

  // Lets an append in, after a delay or a wait as the table above says.
  [[nodiscard]] Status admit(TimePoint deadline);
  // Space was freed: producers waiting check again. Call after the measure dropped.
  void release();
  // Wakes every waiting producer with kClosed; later admits fail too.
  void close();

  // The delay for a log of `bytes`: zero below the band, nullopt at the limit.
  std::optional<Duration> delay_for(uint64_t bytes) const;
  ThrottleCounters counters() const;

 private:
  [[nodiscard]] Status wait_for_space(TimePoint deadline);

  Clock& clock_;
  const uint64_t hard_limit_;
  const uint64_t band_start_;  // 90% of the limit
  const Duration max_delay_;
  const Measure measure_;
  std::atomic<bool> closed_{false};
  std::atomic<uint64_t> delayed_{0}, delay_nanos_{0}, waits_{0}, wait_nanos_{0}, timeouts_{0};
  std::atomic<uint64_t> waiting_{0};
  std::mutex mu_;
  boost::fibers::condition_variable_any cv_;
  ClockSubscription clock_moves_;  // last: its callback uses mu_ and cv_
};

}  // namespace commitlog
