// Waiting for durability without Boost.Fiber locks shared between threads.
//
// A connection fiber could call CommitLog::wait_durable() itself. Then every
// flush wakes every waiting fiber from the log's sync thread, each wake-up
// under the spinlock of the log's condition variable, and a worker whose
// fiber starts a wait while the (preempted) sync thread holds that spinlock
// spins: on two busy cores, most of the server's CPU went there.
//
// So waits go through two stages:
//   a DurabilityThread, one plain thread, is the only caller of
//     wait_durable(): it waits for the newest position any worker asked for,
//     publishes how far the log is durable, and wakes each worker thread
//     through its EpollScheduler (an eventfd write, no fiber lock);
//   a ThreadDurability per worker thread: its fibers ask the thread for a
//     position and wait on a condition variable only their own thread
//     touches; the scheduler's idle hook reads what was published and wakes
//     them.
// Positions become durable in log order: once a position is durable, so is
// every smaller one.
//
// Thread-safety: DurabilityThread is thread-safe. ThreadDurability belongs to
// the worker thread that made it; wait() only from that thread's fibers.
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

  // Registers a worker thread's scheduler, to wake it after each advance.
  void add_worker(EpollScheduler* scheduler);
  // Asks for `position` to become durable.
  void request(Position position);
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

  CommitLog& log_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::optional<Position> requested_;  // guarded by mu_
  std::optional<Position> durable_;    // guarded by mu_
  Status error_;                       // guarded by mu_
  bool waiting_ = false;               // guarded by mu_: the thread sleeps on cv_
  bool stopping_ = false;              // guarded by mu_
  std::vector<EpollScheduler*> workers_;  // guarded by mu_
  std::atomic<uint64_t> generation_{0};
  std::thread thread_;
};

class ThreadDurability {
 public:
  // Makes this the calling thread's current() and hooks it to the thread's
  // EpollScheduler, which must exist.
  explicit ThreadDurability(DurabilityThread& shared);
  ThreadDurability(const ThreadDurability&) = delete;
  ThreadDurability& operator=(const ThreadDurability&) = delete;

  static ThreadDurability* current();

  // Suspends the calling fiber until `position` is durable or the log failed.
  [[nodiscard]] Status wait(Position position);

 private:
  // The scheduler's idle hook: takes in what the DurabilityThread published.
  void refresh();

  DurabilityThread& shared_;
  uint64_t seen_generation_ = 0;
  DurabilityThread::Progress known_;
  boost::fibers::condition_variable_any cv_;  // this thread's fibers only
};

}  // namespace commitlog::kv
