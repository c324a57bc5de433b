#include "tools/kv/durability.h"

#include <algorithm>

namespace commitlog::kv {
namespace {

thread_local ThreadDurability* t_current = nullptr;

// Step 1 polls per round. A closed loop of clients runs dry by itself (a
// connection waiting for this flush sends nothing more); the bound is for
// clients that need no flush, which could otherwise hold it back forever.
constexpr int kDrainPolls = 8;
// Rounds between two holds while holding does not pay (see hold()). Such a
// probe holds up to a flush time for nothing: probing every 8th round cost
// adaptive 3.4% of the SETs at 64 clients with fast fsyncs against never
// holding, every 32nd about 1% (12 alternating rounds);
// with 1-4 ms fsyncs, 32 rounds still take under 0.15 s to notice a change.
constexpr int kProbeRounds = 32;

// A ThreadDurability is touched only by fibers and the dispatcher of one
// thread, which never run at the same time: its condition variable needs no lock.
struct NoLock {
  void lock() {}
  void unlock() {}
};

}  // namespace

ThreadDurability::ThreadDurability(CommitLog& log, Duration max_hold)
    : log_(log), scheduler_(*EpollScheduler::current()), max_hold_(max_hold) {
  t_current = this;
  scheduler_.set_before_sleep([this] { return before_sleep(); });
}

ThreadDurability* ThreadDurability::current() { return t_current; }

bool ThreadDurability::covered(Position position) const {
  return !error_.ok() || (durable_ && position <= *durable_);
}

Status ThreadDurability::wait(Position position, uint64_t& released_by) {
  if (!covered(position)) {
    if (released_by == flushes_ && ++returned_ == released_) all_back_ = SteadyClock::now();
    if (!wanted_ || *wanted_ < position) wanted_ = position;
    ++waiting_;
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
  if (max_hold_ == Duration::zero() || returned_ >= released_ || skip_hold_) return false;
  const TimePoint now = SteadyClock::now();
  if (!hold_until_) {
    // Worth it only when the answered connections come back sooner than a
    // flush takes (with fast fsyncs and a busy client they often do not, and
    // a hold then costs a wake-up per arrival for nothing); every
    // kProbeRounds-th round holds anyway, to notice when they do again.
    if (return_time_ >= flush_time_ && ++rounds_since_hold_ < kProbeRounds) {
      skip_hold_ = true;
      return false;
    }
    rounds_since_hold_ = 0;
    // Counted from the first hold of the round, when the replies of the last
    // flush are sent (a few hundred of them take a while). Waiting longer
    // than a flush takes would cost more than the next flush the late ones
    // then ride.
    hold_until_ = now + std::min(max_hold_, flush_time_);
  }
  if (now >= *hold_until_) return false;
  scheduler_.sleep(*hold_until_ - now);
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
  // How long the last flush's connections took to come back, when this round
  // saw it: all came back, or a hold gave up on the rest.
  if (all_back_ || hold_until_) {
    return_time_ += (all_back_.value_or(started) - released_at_ - return_time_) / 4;
  }
  Status status = log_.wait_durable(target);
  released_at_ = SteadyClock::now();
  // Moving averages over about the last four rounds: a change of load is
  // followed within a few rounds, and one slow fdatasync is smoothed.
  flush_time_ += (released_at_ - started - flush_time_) / 4;
  if (status.ok()) {
    durable_ = target;
  } else {
    error_ = status;
  }
  ++flushes_;
  released_ = waiting_;
  returned_ = 0;
  hold_until_.reset();
  all_back_.reset();
  skip_hold_ = false;
  durable_cv_.notify_all();
}

}  // namespace commitlog::kv
