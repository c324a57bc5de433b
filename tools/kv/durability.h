// Waiting for durability: once per round of each worker's event loop, and
// without Boost.Fiber locks shared between threads.
//
// A connection fiber could call CommitLog::wait_durable() itself, as soon as
// it has appended. Two things go wrong on a busy two-core machine:
//   - cohorts: with batch or adaptive, the first waiter starts a flush while
//     the other connections of the same round are still being served; their
//     writes miss it and wait for the next one;
//   - spinning: every flush wakes every waiting fiber from the log's sync
//     thread under the spinlock of the log's condition variable; a worker
//     whose fiber starts a wait while the (preempted) sync thread holds it
//     spins. Most of the server's CPU went there.
//
// So, per worker thread, a ThreadDurability:
//   - a fiber that needs a position durable notes it and waits on a
//     condition variable only its own thread touches;
//   - when the thread has no ready fiber left (the end of a round: every
//     readable connection was served, as Redis does before its fsync), the
//     scheduler's before-sleep hook hands the newest noted position to the
//     thread's flusher fiber;
//   - the flusher waits for it: itself, with wait_durable(), when no other
//     wait is in progress in the process (one client: the shortest path);
//     else through the DurabilityThread, the one plain thread that waits on
//     the log for everyone else, publishes how far the log is durable and
//     wakes each worker through its EpollScheduler (an eventfd write, no
//     fiber lock); the scheduler's after-poll hook picks that up.
// Positions become durable in log order: once a position is durable, so is
// every smaller one.
//
// Thread-safety: DurabilityThread is thread-safe. A ThreadDurability belongs
// to the worker thread that made it; wait() only from that thread's fibers.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include <boost/fiber/condition_variable.hpp>

#include "commitlog/commit_log.h"
#include "tools/kv/fiber_io.h"

namespace commitlog::kv {

class DurabilityThread {
 public:
  explicit DurabilityThread(CommitLog& log);
  ~DurabilityThread();  // stops the thread
  DurabilityThread(const DurabilityThread&) = delete;
  DurabilityThread& operator=(const DurabilityThread&) = delete;

  CommitLog& log() { return log_; }
  // Registers a worker thread's scheduler, to wake it after each advance.
  void add_worker(EpollScheduler* scheduler);

  // A wait the caller makes itself, with log().wait_durable(): allowed only
  // while no other wait is in progress. end_direct() publishes its result.
  bool begin_direct();
  void end_direct(Position position, const Status& status);
  // A wait through this thread: request() it, then watch progress().
  void request(Position position);
  void end_requested() { outstanding_.fetch_sub(1); }

  // How far the log is durable (everything up to and including it), and its
  // failure; `generation` changes whenever either does.
  struct Progress {
    std::optional<Position> durable;
    Status error;
    uint64_t generation = 0;
  };
  Progress progress() const;
  uint64_t generation() const { return generation_.load(std::memory_order_acquire); }

 private:
  void run();
  void publish(std::optional<Position> durable, const Status& status);  // REQUIRES: mu_ held

  CommitLog& log_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::optional<Position> requested_;     // guarded by mu_
  std::optional<Position> durable_;       // guarded by mu_
  Status error_;                          // guarded by mu_
  bool waiting_ = false;                  // guarded by mu_: the thread sleeps on cv_
  bool stopping_ = false;                 // guarded by mu_
  std::vector<EpollScheduler*> workers_;  // guarded by mu_
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> outstanding_{0};  // waits in progress, direct or requested
  std::thread thread_;
};

class ThreadDurability {
 public:
  // Makes this the calling thread's current(), starts its flusher fiber and
  // hooks it to the thread's EpollScheduler, which must exist. Must outlive
  // the thread's fibers.
  explicit ThreadDurability(DurabilityThread& shared);
  ThreadDurability(const ThreadDurability&) = delete;
  ThreadDurability& operator=(const ThreadDurability&) = delete;

  static ThreadDurability* current();

  // Suspends the calling fiber until `position` is durable or the log failed.
  [[nodiscard]] Status wait(Position position);

 private:
  bool before_sleep();  // hands the newest wanted position to the flusher
  void refresh();       // after each poll: takes in what the DurabilityThread published
  void run_flusher();
  bool covered(Position position) const;

  DurabilityThread& shared_;
  std::optional<Position> wanted_;   // the newest position a fiber of this thread waits for
  std::optional<Position> durable_;  // known durable, and everything before it
  Status error_;
  uint64_t seen_generation_ = 0;
  bool flusher_busy_ = false;
  boost::fibers::condition_variable_any flusher_cv_;  // this thread's fibers only
  boost::fibers::condition_variable_any durable_cv_;  // this thread's fibers only
};

}  // namespace commitlog::kv
