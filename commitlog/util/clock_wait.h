// SPDX-License-Identifier: Apache-2.0
// Timed waits on the log's Clock (commitlog/clock.h), for the library's
// threads and fibers.
//
// A component that sleeps until a time keeps a ClockSubscription whose
// callback wakes its sleepers (notifies its condition variable under the
// mutex the sleepers hold while they check, or sets a flag they check before
// sleeping), and sleeps with wait_until() below, so that the sleep ends when
// the time comes on the real clock by itself, and on a manual clock when it
// is advanced past it.
#pragma once

#include <functional>

#include "commitlog/clock.h"

namespace commitlog {

// Calls `on_move` after every move of a clock that moves only when told.
// Lifetime: registered from construction to destruction; `clock` outlives it.
class ClockSubscription final : public Clock::Sleeper {
 public:
  ClockSubscription(Clock& clock, std::function<void()> on_move)
      : clock_(clock), on_move_(std::move(on_move)) {
    clock_.add_sleeper(*this);
  }
  ~ClockSubscription() { clock_.remove_sleeper(*this); }
  ClockSubscription(const ClockSubscription&) = delete;
  ClockSubscription& operator=(const ClockSubscription&) = delete;

  void time_moved() override { on_move_(); }

 private:
  Clock& clock_;
  const std::function<void()> on_move_;
};

// Waits on `cv` (holding `lock`) until `ready()` or until `deadline` on
// `clock` has come. Returns ready()'s last answer. `cv` must be notified
// under `lock`'s mutex by whoever changes what ready() reads, and by the
// clock's subscription when the clock moves.
template <typename ConditionVariable, typename Lock, typename Ready>
bool wait_until(const Clock& clock, ConditionVariable& cv, Lock& lock, TimePoint deadline,
                Ready ready) {
  while (!ready()) {
    if (clock.now() >= deadline) return false;
    const TimePoint wake = clock.wake_by_itself_at(deadline);
    if (wake == TimePoint::max()) {
      cv.wait(lock);
    } else {
      cv.wait_until(lock, wake);
    }
  }
  return true;
}

}  // namespace commitlog
