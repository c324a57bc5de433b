// SPDX-License-Identifier: Apache-2.0
// Non-blocking sockets for Boost.Fiber fibers, one epoll per thread.
//
// Boost.Fiber has no networking, so each server thread installs an
// EpollScheduler: round-robin scheduling of the thread's fibers, with the
// idle wait replaced by epoll_pwait2().
//
//   A fiber reads; the socket says EAGAIN
//     -> the fiber waits on the socket's fiber condition variable (suspends).
//   No fiber of the thread is ready
//     -> Boost.Fiber's dispatcher calls suspend_until(), here epoll_pwait2()
//        with the timeout of the earliest sleeping fiber;
//     -> for each ready socket it sets the ready flag and notifies its fiber
//        (scheduled on this thread; it runs once suspend_until returns).
//   A fiber is woken by another thread (a lock released there)
//     -> Boost.Fiber calls notify() from that thread, which writes to an
//        eventfd the epoll watches, if the thread sleeps there.
//   Before it would block, the thread runs its before-sleep hook, the end of
//   a round of the event loop: durability.h waits there for the round's
//   flush and makes the round's fibers ready (then the thread does not poll).
//
// Sockets are registered once, edge-triggered. A fiber clears the ready flag
// before each read or write, and waits only after EAGAIN (or, for reads,
// after a short read: the socket was empty then, so new data is a new edge),
// so an edge that arrives in between is never missed.
//
// A fiber that keeps finding data never reaches the idle wait; it calls
// yield_for_io() now and then, which polls (timeout 0) and yields, so the
// other sockets of its thread are served too.
//
// Thread-safety: a Socket belongs to the thread whose scheduler registered
// it; only that thread's fibers may use it. notify() is called from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <span>

#include <boost/fiber/algo/algorithm.hpp>
#include <boost/fiber/condition_variable.hpp>
#include <boost/fiber/scheduler.hpp>

#include "commitlog/status.h"

namespace commitlog::kv {

// The lock a fiber condition variable (condition_variable_any) waits with
// where only one thread's fibers touch the state it guards: they never run
// at the same time, so nothing needs locking.
struct NoLock {
  void lock() {}
  void unlock() {}
};

// What a fiber waiting for a socket waits on. Touched only by its thread.
struct IoWaiter {
  bool readable = false;  // an edge since the last clear: EPOLLIN, hang-up or error
  bool writable = false;  // EPOLLOUT, hang-up or error
  boost::fibers::condition_variable_any cv;
};

class EpollScheduler final : public boost::fibers::algo::algorithm {
 public:
  // Makes a new EpollScheduler the calling thread's fiber scheduler and
  // returns it. Boost.Fiber owns it; it lives as long as the thread.
  static EpollScheduler& install();
  // For install() (Boost.Fiber constructs the scheduler): sets `installed`.
  explicit EpollScheduler(EpollScheduler*& installed);
  ~EpollScheduler() override;

  // Watches `fd` (edge-triggered) for `waiter`, until remove().
  [[nodiscard]] Status add(int fd, IoWaiter* waiter);
  void remove(int fd);
  // Waits for the events of at most `timeout` (negative: no limit) and wakes
  // the fibers of the sockets they concern. A wait that may block should go
  // through sleep(), which remote wake-ups interrupt.
  void poll(std::chrono::nanoseconds timeout);
  // poll(timeout), interrupted by notify(); returns at once if notify() came
  // since the last sleep.
  void sleep(std::chrono::nanoseconds timeout);
  // Runs on this thread, outside any fiber, when no fiber is ready, before
  // the blocking poll; may notify fiber condition variables of this thread
  // and returns whether it made a fiber ready (then the poll is skipped).
  void set_before_sleep(std::function<bool()> hook) { before_sleep_ = std::move(hook); }

  // boost::fibers::algo::algorithm
  void awakened(boost::fibers::context* ctx) noexcept override;
  boost::fibers::context* pick_next() noexcept override;
  bool has_ready_fibers() const noexcept override;
  void suspend_until(const std::chrono::steady_clock::time_point& deadline) noexcept override;
  void notify() noexcept override;

 private:
  boost::fibers::scheduler::ready_queue_type ready_;
  int epoll_fd_ = -1;
  int event_fd_ = -1;
  std::atomic<bool> sleeping_{false};  // in (or about to enter) a blocking epoll_wait
  std::atomic<bool> notified_{false};  // a remote wake-up since the last sleep
  std::function<bool()> before_sleep_;
};

// Polls the sockets of `scheduler` (the calling thread's) without blocking,
// then yields.
void yield_for_io(EpollScheduler& scheduler);

// A non-blocking socket registered with the calling thread's EpollScheduler.
class Socket {
 public:
  // Takes `fd` (closed by the destructor when `owned`). `scheduler` is the
  // calling thread's and must outlive the socket.
  Socket(EpollScheduler& scheduler, int fd, bool owned);
  ~Socket();
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;

  [[nodiscard]] Status status() const { return status_; }  // of the registration
  int fd() const { return fd_; }

  // Reads what is there, waiting until something is: 0 at the peer's end.
  [[nodiscard]] Result<size_t> read_some(std::span<char> buffer);
  // Writes all of `data`, waiting for room as needed.
  [[nodiscard]] Status write_all(std::span<const char> data);
  // Accepts a connection (listening sockets), non-blocking and close-on-exec.
  [[nodiscard]] Result<int> accept();
  // Reads that returned data without waiting, in a row.
  int reads_without_wait() const { return reads_without_wait_; }

 private:
  void wait(bool for_write);

  EpollScheduler& scheduler_;
  int fd_;
  bool owned_;
  Status status_;
  IoWaiter waiter_;
  int reads_without_wait_ = 0;
  bool drained_ = false;  // the last read was short: the socket was empty after it
};

}  // namespace commitlog::kv
