// SPDX-License-Identifier: Apache-2.0
// Public API. The log's time: every duration and point in time the library
// takes or reports is read from one Clock (Options::clock). The default is
// the steady clock; a test substitutes a manual clock and moves time itself.
//
// A clock whose time moves only when told (not in real time) must wake the
// library's timed sleeps when it moves: each sleeper registers with
// add_sleeper(), and the clock calls its time_moved() after every move. The
// real clock never calls it: its sleeps end by themselves, at
// wake_by_itself_at().
//
// Thread-safety: every member may be called from any thread at any time.
#pragma once

// One clear message instead of a page of errors from C++20 library features.
#if __cplusplus < 202002L
#error "commitlog needs C++20: compile with -std=c++20 or later"
#else

#include <chrono>
#include <cstdint>

#include "commitlog/export.h"

namespace commitlog {

using SteadyClock = std::chrono::steady_clock;
using TimePoint = SteadyClock::time_point;
using Duration = SteadyClock::duration;

class COMMITLOG_EXPORT Clock {
 public:
  // Something in the library that sleeps until a time on a clock.
  class Sleeper {
   public:
    // The clock's time moved: a sleep until a time on it re-reads now().
    // Called on the thread that moved the time; must not call back into the
    // clock's add_sleeper() or remove_sleeper().
    virtual void time_moved() = 0;

   protected:
    ~Sleeper() = default;
  };

  virtual ~Clock() = default;
  // Monotonic time, on the steady clock's scale.
  virtual TimePoint now() const = 0;
  // Microseconds since the Unix epoch: the timestamps written into entries
  // and segment headers. May step (it is the system's wall clock).
  virtual uint64_t wall_micros() const = 0;
  // The steady-clock time at which a thread or fiber sleeping until
  // `deadline` on this clock should wake by itself: `deadline` for the real
  // clock, TimePoint::max() for a clock that wakes its sleepers when it moves.
  virtual TimePoint wake_by_itself_at(TimePoint deadline) const = 0;
  // `sleeper` stays registered until remove_sleeper(), which returns only
  // once no time_moved() call on it is running; the sleeper must outlive that.
  virtual void add_sleeper(Sleeper& sleeper) = 0;
  virtual void remove_sleeper(Sleeper& sleeper) = 0;
};

// The steady clock (and the system clock for wall_micros()). Never destroyed.
COMMITLOG_EXPORT Clock* real_clock();

}  // namespace commitlog

#endif  // C++20
