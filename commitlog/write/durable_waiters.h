// SPDX-License-Identifier: Apache-2.0
// The durable watermark and the producers waiting on it.
//
// The round (write/sync_thread.h: the sync thread, or a producer leading a
// flush) advances the watermark after each flush and wakes every
// producer it covers. A producer on a plain thread blocks that thread on a
// futex word (FutexWord). A producer on a Boost.Fiber fiber suspends
// only its fiber: the fibers waiting on one scheduler thread form a group, one
// of them (the group's leader) waits for the sync thread, and the leader wakes
// the rest of its group from inside that thread. So a flush makes one
// cross-thread wake-up per scheduler thread, however many fibers it covers.
// The fibers' groups and the failure state share one mutex; a plain thread's
// wait takes it only to read a failure.
//
// With a spin limit (Options::spin_wait, off by default), a lone thread
// waiter whose last flush carried one mutation may spin before it sleeps
// (FutexWord's spinning, with its rules): a producer and the sync thread
// then hand each flush back and forth, and a futex wake-up is a large part
// of each wait.
//
// Positions are packed into one 64-bit word: (segment ordinal << 40) | offset,
// where the ordinal counts the segments this process created. Entries of
// segments from before the process started are always durable.
//
// Thread-safety: every member is thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <boost/fiber/condition_variable.hpp>

#include "commitlog/util/futex_word.h"
#include "commitlog/util/mutex.h"
#include "commitlog/sync_policy.h"
#include "commitlog/status.h"

namespace commitlog {

class DurableWaiters {
 public:
  static constexpr unsigned kOffsetBits = 40;
  static uint64_t pack(uint64_t ordinal, uint64_t offset) { return (ordinal << kOffsetBits) | offset; }

  // `spin_limit`: the longest a lone thread waiter spins before it sleeps
  // (Options::spin_wait); zero: never. `clock` times the spins; it must
  // outlive this object.
  // `on_failed`, if set, runs once, in the first fail() call after the
  // waiters are woken: what else waits for a log that can no longer make
  // progress (a producer waiting for a new segment).
  explicit DurableWaiters(const Clock& clock, Duration spin_limit = Duration::zero(),
                          std::function<void(const Status&)> on_failed = {})
      : on_failed_(std::move(on_failed)), thread_wakes_(clock, spin_limit) {}

  // True when the entry at `packed` is durable.
  bool durable(uint64_t packed) const { return packed < durable_.load(std::memory_order_acquire); }
  uint64_t durable_packed() const { return durable_.load(std::memory_order_acquire); }
  TimePoint last_flush_started() const;

  // True unless the caller is a spawned Boost.Fiber fiber: a wait here blocks
  // the caller's thread (a plain thread, or a thread's main context).
  static bool caller_blocks_thread();

  // Blocks (the fiber, or the thread) until `packed` is durable or the log
  // failed. Returns the failure, if any. `on_waiting`, if given, runs once
  // the caller counts in waiting() and before it blocks: the place to wake
  // the sync thread, which then never plans without this waiter, or to run
  // the flush: a flush that fails from then on is this wait's error.
  Status wait_durable(uint64_t packed, const std::function<void()>& on_waiting = {});
  // Blocks until a flush that started after `since` has completed.
  Status wait_flush_started_after(TimePoint since);
  size_t waiting() const { return waiting_.load(std::memory_order_acquire); }
  // The lone waiter's spins (see above).
  const SpinCounters& spin_counters() const { return thread_wakes_.spin_counters(); }

  // The round, before advance(): the flush made `entries` mutations durable.
  void note_flush(uint64_t entries) { lone_flush_.store(entries <= 1, std::memory_order_relaxed); }
  // The round: everything below `packed` is durable, flushed by a flush
  // that started at `flush_started`. Wakes the waiters.
  void advance(uint64_t packed, TimePoint flush_started);
  // Makes every current and future wait return `error` (sticky), then runs
  // on_failed. Later calls change nothing.
  void fail(const Status& error);
  // Makes the waits in progress now return `error`; later waits are not
  // affected (commit_failure_policy ignore: the failed sync's waiters get the
  // error, the log goes on).
  void fail_waiting(const Status& error);
  // The sticky error, or ok.
  Status error() const;
  bool failed() const { return failed_.load(std::memory_order_acquire); }

 private:
  void notify();
  void notify_all();
  template <typename Predicate>
  void wait(Predicate ready);
  template <typename Predicate>
  void wait_on_thread(Predicate ready);
  Status failure_since(uint64_t round) const;  // the error a failed wait returns

  // The fibers of one scheduler thread waiting here.
  struct FiberGroup {
    std::thread::id thread;
    bool has_leader = false;
    boost::fibers::condition_variable_any members;  // all but the leader wait here
  };
  FiberGroup& group_of_this_thread() REQUIRES(mu_);
  // The waits let mu_ go meanwhile.
  template <typename Predicate>
  void wait_in_group(Predicate ready) REQUIRES(mu_);

  const std::function<void(const Status&)> on_failed_;
  std::atomic<bool> lone_flush_{false};  // the last flush carried at most one mutation
  std::atomic<uint64_t> durable_{0};
  std::atomic<int64_t> last_flush_started_ns_{0};
  std::atomic<size_t> waiting_{0};
  std::atomic<bool> failed_{false};
  mutable Mutex mu_;
  Status error_ GUARDED_BY(mu_);
  std::atomic<uint64_t> failed_rounds_{0};  // fail_waiting() calls, raised under mu_
  Status round_error_ GUARDED_BY(mu_);      // the last fail_waiting() error
  uint64_t wakes_ GUARDED_BY(mu_) = 0;      // advance/fail calls, for the leaders
  std::vector<std::unique_ptr<FiberGroup>> groups_ GUARDED_BY(mu_);
  boost::fibers::condition_variable_any leaders_;    // the groups' leaders wait here
  FutexWord thread_wakes_;                          // plain threads wait on it
};

}  // namespace commitlog
