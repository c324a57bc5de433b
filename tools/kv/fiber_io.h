// Non-blocking sockets for Boost.Fiber fibers, one epoll per thread.
//
// Boost.Fiber has no networking, so each server thread installs an
// EpollScheduler: round-robin scheduling of the thread's fibers, with the
// idle wait replaced by epoll_wait().
//
//   A fiber reads; the socket says EAGAIN
//     -> the fiber waits on the socket's fiber condition variable (suspends).
//   No fiber of the thread is ready
//     -> Boost.Fiber's dispatcher calls suspend_until(), here epoll_wait()
//        with the timeout of the earliest sleeping fiber;
//     -> for each ready socket it sets the ready flag and notifies its fiber
//        (scheduled on this thread; it runs once suspend_until returns).
//   A fiber is woken by another thread (a lock released there)
//     -> Boost.Fiber calls notify() from that thread, which writes to an
//        eventfd the epoll_wait watches, if the thread sleeps there;
//   another thread has news for this one (durability.h)
//     -> it calls wake(), the same eventfd; after each poll the thread runs
//        its after-poll hook, which picks the news up and wakes fibers locally.
//   Before it would block, the thread runs its before-sleep hook, which may
//   make fibers ready (then it only polls): the end of a round of the event
//   loop, where durability.h asks the log for one flush for the whole round.
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

#include "segment/status.h"

namespace commitlog::kv {

// What a fiber waiting for a socket waits on. Touched only by its thread.
struct IoWaiter {
  bool readable = false;  // an edge since the last clear: EPOLLIN, hang-up or error
  bool writable = false;  // EPOLLOUT, hang-up or error
  boost::fibers::condition_variable_any cv;
};

class EpollScheduler final : public boost::fibers::algo::algorithm {
 public:
  EpollScheduler();
  ~EpollScheduler() override;

  // The calling thread's scheduler; null if it has not installed one with
  // boost::fibers::use_scheduling_algorithm<EpollScheduler>().
  static EpollScheduler* current();

  // Watches `fd` (edge-triggered) for `waiter`, until remove().
  [[nodiscard]] Status add(int fd, IoWaiter* waiter);
  void remove(int fd);
  // Waits for the events of at most `timeout_ms` (-1: no limit), wakes
  // the fibers of the sockets they concern, then runs the after-poll hook.
  void poll(int timeout_ms);
  // Hooks run on this thread, outside any fiber; they may notify fiber
  // condition variables of this thread. `before_sleep` runs when no fiber is
  // ready, before the blocking poll, and returns whether it made one ready;
  // `after_poll` after every poll.
  void set_hooks(std::function<bool()> before_sleep, std::function<void()> after_poll) {
    before_sleep_ = std::move(before_sleep);
    after_poll_ = std::move(after_poll);
  }
  // Makes the thread poll soon (from any thread): interrupts its epoll_wait.
  void wake() noexcept;

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
  std::function<void()> after_poll_;
};

// Polls the thread's sockets without blocking, then yields.
void yield_for_io();

// A non-blocking socket registered with the calling thread's EpollScheduler.
class Socket {
 public:
  // Takes `fd` (closed by the destructor when `owned`).
  Socket(int fd, bool owned);
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

  int fd_;
  bool owned_;
  Status status_;
  IoWaiter waiter_;
  int reads_without_wait_ = 0;
  bool drained_ = false;  // the last read was short: the socket was empty after it
};

}  // namespace commitlog::kv
