// SPDX-License-Identifier: Apache-2.0
// A Clock whose time moves only when a test advances it. The library's timed
// sleeps (the sync thread's plan, a group window, the space throttle's
// delays) never end by themselves on it: advance() wakes them, and each then
// reads the new time. So a test moves time in steps and sleeps nowhere.
//
// A test learns that the library has settled into a timed sleep with
// await_sleep_until(): the library announces each timed sleep's deadline
// (Clock::wake_by_itself_at) just before it sleeps, and the announcements are
// forgotten at each advance(), after which every sleeper that still has a
// deadline ahead announces it again.
//
// Thread-safety: every member may be called from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>

#include "commitlog/clock.h"

namespace commitlog::testing {

class ManualClock final : public Clock {
 public:
  // Starts at an arbitrary point well after the steady clock's epoch.
  ManualClock();

  TimePoint now() const override { return now_.load(); }
  // A fixed wall-clock time at the start, moving with now().
  uint64_t wall_micros() const override;
  TimePoint wake_by_itself_at(TimePoint deadline) const override;
  void add_sleeper(Sleeper& sleeper) override;
  void remove_sleeper(Sleeper& sleeper) override;

  // Moves the time forward and wakes every sleeper. REQUIRES: by >= 0.
  void advance(Duration by);
  void advance_to(TimePoint at);  // no-op if `at` is not ahead

  // Waits (on a condition, at most `limit` of real time, a safety net for a
  // broken test) until a timed sleep until `deadline` was announced since the
  // last advance(). False if none was.
  bool await_sleep_until(TimePoint deadline, Duration limit = std::chrono::seconds(30)) const;
  // The earliest deadline still ahead announced since the last advance(),
  // waiting for one as above; TimePoint::max() if none came.
  TimePoint await_next_deadline(Duration limit = std::chrono::seconds(30)) const;

 private:
  const TimePoint start_;
  std::atomic<TimePoint> now_;
  // Two mutexes: a sleeper announces while it holds its own lock, which its
  // time_moved() takes while advance() holds sleepers_mu_.
  mutable std::mutex announce_mu_;
  mutable std::condition_variable announced_cv_;
  mutable std::multiset<TimePoint> announced_;  // guarded by announce_mu_
  std::mutex sleepers_mu_;
  std::set<Sleeper*> sleepers_;  // guarded by sleepers_mu_
};

}  // namespace commitlog::testing
