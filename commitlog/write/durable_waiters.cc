// SPDX-License-Identifier: Apache-2.0
#include "commitlog/write/durable_waiters.h"

#include <algorithm>

#include <boost/fiber/context.hpp>

namespace commitlog {

bool DurableWaiters::caller_blocks_thread() {
  return !boost::fibers::context::active()->is_context(boost::fibers::type::worker_context);
}

// A spawned fiber suspends on the fiber condition variable; a plain thread
// (or a thread's main context) blocks in a futex wait. Boost 1.74's
// condition variable guards its queue with a spinlock that never yields, so
// plain threads contending for it burn their CPUs instead of sleeping.
//
// The caller counts itself in waiting_ first. waiting_ is raised before the
// last check, and advance() reads it after storing the watermark (both
// seq_cst), so a wake-up cannot be missed.
template <typename Predicate>
void DurableWaiters::wait(Predicate ready) {
  if (!caller_blocks_thread()) {
    MutexLock lock(mu_);
    wait_in_group(ready);
  } else {
    wait_on_thread(ready);
  }
}

// Without a mutex: a std condition variable would re-take its mutex on waking,
// marked contended, and glibc's unlock would then make a futex call that wakes
// nobody, on a lone producer's critical path; 256 woken threads would queue
// on it. The word is read before the check and every wake-up raises it after
// changing what the check reads, so the wait cannot sleep through one.
//
// Only a lone waiter of one-mutation flushes may spin: with more producers
// the CPU it would burn is the others', and a flush of several mutations
// comes no sooner for it.
template <typename Predicate>
void DurableWaiters::wait_on_thread(Predicate ready) {
  bool may_spin = waiting_.load() == 1 && lone_flush_.load(std::memory_order_relaxed);
  while (true) {
    const uint32_t seen = thread_wakes_.load();
    if (ready()) break;
    thread_wakes_.wait(seen, TimePoint::max(), may_spin);
    may_spin = false;
  }
}

// With every fiber on one condition variable, each flush woke hundreds of
// fibers one by one from the sync thread, each a remote schedule, all under
// the variable's spinlock -- on which the fibers that had already run and
// came back to wait then spun. So the sync thread wakes only the leaders; a leader wakes its own
// group, mostly fibers of its own thread, which is a local schedule. A woken
// group re-checks and the first fiber still waiting leads it next.
template <typename Predicate>
void DurableWaiters::wait_in_group(Predicate ready) {
  FiberGroup& group = group_of_this_thread();
  while (!ready()) {
    if (group.has_leader) {
      group.members.wait(mu_);
      continue;
    }
    group.has_leader = true;
    const uint64_t seen = wakes_;
    while (wakes_ == seen) leaders_.wait(mu_);
    group.has_leader = false;
    mu_.unlock();
    group.members.notify_all();
    mu_.lock();
  }
}

DurableWaiters::FiberGroup& DurableWaiters::group_of_this_thread() {
  const std::thread::id self = std::this_thread::get_id();
  for (const auto& group : groups_) {
    if (group->thread == self) return *group;
  }
  groups_.push_back(std::make_unique<FiberGroup>());
  groups_.back()->thread = self;
  return *groups_.back();
}

TimePoint DurableWaiters::last_flush_started() const {
  return TimePoint(Duration(last_flush_started_ns_.load(std::memory_order_acquire)));
}

// A producer whose entry was in a flush that failed under commit_failure_policy
// ignore may start waiting after that round's error went out; its own sync
// request was spent on the failed flush. Counting it before it pokes the sync
// thread makes the next plan see it waiting (batch then flushes again), where
// poking first could let the thread plan, see nobody, and sleep for good.
// The failed rounds are counted before `on_waiting` runs: a producer that
// leads the flush there (SyncThread::lead_flush) and sees it fail gets that
// round's error, where counting after would wait for a round nobody plans.
Status DurableWaiters::wait_durable(uint64_t packed, const std::function<void()>& on_waiting) {
  if (durable(packed)) return {};
  waiting_.fetch_add(1);
  const uint64_t round = failed_rounds_.load();
  if (on_waiting) on_waiting();
  wait([&] { return durable_.load() > packed || failed_.load() || failed_rounds_.load() != round; });
  const Status status = durable_.load() > packed ? Status{} : failure_since(round);
  waiting_.fetch_sub(1);
  return status;
}

Status DurableWaiters::wait_flush_started_after(TimePoint since) {
  const int64_t since_ns = since.time_since_epoch().count();
  if (last_flush_started_ns_.load() > since_ns) return {};
  waiting_.fetch_add(1);
  const uint64_t round = failed_rounds_.load();
  wait([&] {
    return last_flush_started_ns_.load() > since_ns || failed_.load() || failed_rounds_.load() != round;
  });
  const Status status = failed_.load() || failed_rounds_.load() != round ? failure_since(round) : Status{};
  waiting_.fetch_sub(1);
  return status;
}

Status DurableWaiters::failure_since(uint64_t round) const {
  MutexLock lock(mu_);
  if (failed_.load()) return error_;
  return failed_rounds_.load() != round ? round_error_ : Status{};
}

void DurableWaiters::advance(uint64_t packed, TimePoint flush_started) {
  last_flush_started_ns_.store(flush_started.time_since_epoch().count());
  if (packed > durable_.load()) durable_.store(packed);
  if (waiting_.load() > 0) notify();
}

void DurableWaiters::fail(const Status& error) {
  {
    MutexLock lock(mu_);
    if (failed_.load()) return;
    error_ = error;
    failed_.store(true);
    ++wakes_;
  }
  notify_all();
  if (on_failed_) on_failed_(error);
}

void DurableWaiters::fail_waiting(const Status& error) {
  {
    MutexLock lock(mu_);
    round_error_ = error;
    failed_rounds_.fetch_add(1);
    ++wakes_;
  }
  notify_all();
}

Status DurableWaiters::error() const {
  MutexLock lock(mu_);
  return error_;
}

void DurableWaiters::notify() {
  {
    // Also orders the watermark's store before a waiter's check.
    MutexLock lock(mu_);
    ++wakes_;
  }
  notify_all();
}

void DurableWaiters::notify_all() {
  leaders_.notify_all();
  thread_wakes_.fetch_add(1);
  thread_wakes_.wake_all();
}

}  // namespace commitlog
