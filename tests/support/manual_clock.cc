// SPDX-License-Identifier: Apache-2.0
#include "tests/support/manual_clock.h"

namespace commitlog::testing {
namespace {

constexpr TimePoint kStart = TimePoint{} + std::chrono::hours(1000);
// 2026-01-01T00:00:00Z.
constexpr uint64_t kStartWallMicros = 1767225600ull * 1000000;

}  // namespace

ManualClock::ManualClock() : start_(kStart), now_(kStart) {}

uint64_t ManualClock::wall_micros() const {
  return kStartWallMicros + static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(now() - start_).count());
}

TimePoint ManualClock::wake_by_itself_at(TimePoint deadline) const {
  {
    std::lock_guard lock(announce_mu_);
    announced_.insert(deadline);
  }
  announced_cv_.notify_all();
  return TimePoint::max();
}

void ManualClock::add_sleeper(Sleeper& sleeper) {
  std::lock_guard lock(sleepers_mu_);
  sleepers_.insert(&sleeper);
}

// Under sleepers_mu_, so it waits for an advance() that is calling the sleeper.
void ManualClock::remove_sleeper(Sleeper& sleeper) {
  std::lock_guard lock(sleepers_mu_);
  sleepers_.erase(&sleeper);
}

void ManualClock::advance(Duration by) {
  {
    std::lock_guard lock(announce_mu_);
    now_.store(now_.load() + by);
    announced_.clear();
  }
  std::lock_guard lock(sleepers_mu_);
  for (Sleeper* sleeper : sleepers_) sleeper->time_moved();
}

void ManualClock::advance_to(TimePoint at) {
  const TimePoint now = now_.load();
  if (at > now) advance(at - now);
}

bool ManualClock::await_sleep_until(TimePoint deadline, Duration limit) const {
  std::unique_lock lock(announce_mu_);
  return announced_cv_.wait_for(lock, limit, [&] { return announced_.count(deadline) > 0; });
}

TimePoint ManualClock::await_next_deadline(Duration limit) const {
  std::unique_lock lock(announce_mu_);
  // A sleeper that read the time before the last advance() may announce a
  // deadline that has passed; it wakes at once and announces again.
  const auto ahead = [&] { return announced_.upper_bound(now()); };
  if (!announced_cv_.wait_for(lock, limit, [&] { return ahead() != announced_.end(); })) {
    return TimePoint::max();
  }
  return *ahead();
}

}  // namespace commitlog::testing
