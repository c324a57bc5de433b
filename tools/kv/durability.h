// Waiting for durability: once per round of each worker's event loop, the
// way Redis fsyncs once per turn of its loop, before it replies.
//
// Per worker thread, a ThreadDurability:
//   - a fiber that needs a position durable notes it and waits on a
//     condition variable only its own thread touches;
//   - when the thread has no ready fiber left (every readable connection was
//     served), the scheduler's before-sleep hook ends the round:
//       1. it polls the sockets without blocking, as long as that finds
//          requests (a few times at most), so that requests which arrived
//          meanwhile join this round's flush;
//       2. it holds the round open while connections the last flush answered
//          have not sent their next write yet, if they lately came back
//          sooner than a flush takes, for at most `max_hold` and at most one
//          flush time (see below);
//       3. the thread itself waits, with CommitLog::wait_durable(), for the
//          newest noted position: the log's sync thread flushes and wakes it
//          (a futex; no fiber lock is shared between threads), and every
//          fiber of the round becomes ready at once and sends its replies in
//          one pass.
// The thread blocks during the flush, so a worker sleeps once per flush, not
// once per request arriving during it, and each round costs two thread
// hand-offs (worker to sync thread and back).
//
// Why hold (2): clients that wait for their reply before they send again
// split into two cohorts that take turns: those answered by flush N come back
// while flush N+1 runs (the thread is blocked), and wait for N+2. Each flush
// carries half of the clients and each write waits two flushes. Waiting for
// the answered ones, when they come back sooner than a flush takes, merges
// the cohorts. The thread knows exactly who it answered (`released_by`), so
// it stops holding the moment the last of them is back.
//
// Positions become durable in log order: once a position is durable, so is
// every smaller one.
//
// Thread-safety: a ThreadDurability belongs to the worker thread that made
// it; wait() only from that thread's fibers.
#pragma once

#include <cstdint>
#include <optional>

#include <boost/fiber/condition_variable.hpp>

#include "commitlog/commit_log.h"
#include "tools/kv/fiber_io.h"

namespace commitlog::kv {

class ThreadDurability {
 public:
  // Makes this the calling thread's current() and hooks it to the thread's
  // EpollScheduler, which must exist. `max_hold` bounds step 2 (zero: never
  // hold). Must outlive the thread's fibers.
  ThreadDurability(CommitLog& log, Duration max_hold);
  ThreadDurability(const ThreadDurability&) = delete;
  ThreadDurability& operator=(const ThreadDurability&) = delete;

  static ThreadDurability* current();

  // Suspends the calling fiber until `position` is durable or the log failed.
  // `released_by` belongs to the caller (one per connection, initially 0):
  // which flush of this thread answered it last.
  [[nodiscard]] Status wait(Position position, uint64_t& released_by);

 private:
  bool before_sleep();
  // Step 2: true when a wait for the answered connections made fibers ready.
  bool hold();
  void flush();
  bool covered(Position position) const;

  CommitLog& log_;
  EpollScheduler& scheduler_;
  const Duration max_hold_;
  std::optional<Position> wanted_;   // the newest position a fiber of this thread waits for
  std::optional<Position> durable_;  // known durable, and everything before it
  Status error_;
  int polls_ = 0;                        // step 1 polls of this round so far
  uint64_t flushes_ = 0;                 // flushes this thread waited for
  uint64_t waiting_ = 0;                 // fibers waiting now
  uint64_t released_ = 0;                // fibers the last flush answered
  uint64_t returned_ = 0;                // of those, waiting again
  std::optional<TimePoint> hold_until_;  // the end of this round's hold, once it began
  std::optional<TimePoint> all_back_;    // when the last of the released came back
  bool skip_hold_ = false;               // this round does not hold
  int rounds_since_hold_ = 0;
  TimePoint released_at_{};  // when the last flush ended
  Duration flush_time_{};    // moving average of the thread's wait for a flush
  Duration return_time_{};   // moving average: from a flush until all it released are back
  boost::fibers::condition_variable_any durable_cv_;  // this thread's fibers only
};

}  // namespace commitlog::kv
