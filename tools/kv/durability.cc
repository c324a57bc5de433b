// SPDX-License-Identifier: Apache-2.0
#include "tools/kv/durability.h"

#include <algorithm>
#include <utility>

namespace commitlog::kv {
namespace {

// Step 1 polls per round. A closed loop of clients runs dry by itself (a
// connection waiting for this flush sends nothing more); the bound is for
// clients that need no flush, which could otherwise hold it back forever.
constexpr int kDrainPolls = 8;

}  // namespace

std::optional<TimePoint> RoundHold::until(TimePoint now, uint64_t waiting, Duration cap) const {
  if (cap == Duration::zero() || !flush_time_.known() || !return_time_.known()) return std::nullopt;
  const uint64_t pending = released_ > returned_ ? released_ - returned_ : 0;
  return hold_group_until(
      {now, released_at_, pending, waiting, flush_time_.value(), return_time_.value(), cap});
}

// How long the last flush's connections took to come back: until the last
// of them did, or, if some did not, at least until this flush.
void RoundHold::flush_started(TimePoint now) {
  if (released_ > 0) return_time_.add(all_back_.value_or(now) - released_at_);
}

void RoundHold::flush_finished(TimePoint started, TimePoint now, uint64_t waiting) {
  flush_time_.add(now - started);
  released_at_ = now;
  released_ = waiting;
  returned_ = 0;
  all_back_.reset();
}

ThreadDurability::ThreadDurability(WaitDurable wait_durable, EpollScheduler& scheduler,
                                   Duration max_hold)
    : wait_durable_(std::move(wait_durable)), scheduler_(scheduler), max_hold_(max_hold) {
  scheduler_.set_before_sleep([this] { return before_sleep(); });
}

bool ThreadDurability::covered(Position position) const {
  return !error_.ok() || (durable_ && position <= *durable_);
}

Status ThreadDurability::wait(Position position, uint64_t& released_by) {
  if (!covered(position)) {
    if (released_by == flushes_) hold_.note_return(SteadyClock::now());
    if (!wanted_ || *wanted_ < position) wanted_ = position;
    ++waiting_;
    // Only this thread's fibers and its dispatcher touch a ThreadDurability.
    NoLock lock;
    durable_cv_.wait(lock, [&] { return covered(position); });
    --waiting_;
    released_by = flushes_;
  }
  return error_;
}

bool ThreadDurability::before_sleep() {
  if (!wanted_ || covered(*wanted_)) return false;
  if (polls_ < kDrainPolls) {
    ++polls_;
    scheduler_.poll(std::chrono::nanoseconds(0));
    if (scheduler_.has_ready_fibers()) return true;
  }
  if (hold()) return true;
  polls_ = 0;
  flush();
  return true;
}

bool ThreadDurability::hold() {
  const TimePoint now = SteadyClock::now();
  const std::optional<TimePoint> until = hold_.until(now, waiting_, max_hold_);
  if (!until) return false;
  scheduler_.sleep(*until - now);
  return scheduler_.has_ready_fibers();
}

void ThreadDurability::flush() {
  // The whole thread waits, as Redis's loop does in fdatasync: a fiber that
  // waited instead would leave the thread to wake for every request arriving
  // during the flush (on this machine a context switch is the dearest thing
  // a request costs), and the log would wake it from its sync thread through
  // Boost.Fiber's spinlocks.
  const Position target = *wanted_;
  const TimePoint started = SteadyClock::now();
  hold_.flush_started(started);
  Status status = wait_durable_(target);
  hold_.flush_finished(started, SteadyClock::now(), waiting_);
  if (status.ok()) {
    durable_ = target;
  } else {
    error_ = status;
  }
  ++flushes_;
  durable_cv_.notify_all();
}

}  // namespace commitlog::kv
