// SPDX-License-Identifier: Apache-2.0
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
//       2. it holds the round open while connections the last flush
//          answered have not sent their next write yet, by the group hold
//          of policies/group_hold.h (the log's own rule for its producers),
//          with the policy's max_added_delay as the cap: never longer than
//          the log's policy may delay a write itself, so with batch (and
//          periodic, whose writes are not waited for) it never holds;
//       3. the thread itself waits (WaitDurable) for the newest noted
//          position, and every fiber of the round becomes ready at once and
//          sends its replies in one pass.
// The thread blocks during the flush, so a worker sleeps once per flush, not
// once per request arriving during it.
//
// What step 3 waits on is the one thing that differs between the server's
// modes: CommitLog::wait_durable(), where the log's sync thread flushes and
// wakes the worker (a futex; no fiber lock is shared between threads; two
// thread hand-offs a round), or, in the reference setting, a sync of
// RocksDB's own WAL on the worker itself (Engine::sync_wal()).
//
// Why hold (2): clients that wait for their reply before they send again
// split into two cohorts that take turns (group_hold.h). The thread knows
// exactly who it answered (`released_by`), so it counts them back one by one
// and ends the hold the moment the rule says so.
//
// Positions become durable in log order: once a position is durable, so is
// every smaller one.
//
// Thread-safety: a ThreadDurability belongs to the worker thread that made
// it; wait() only from that thread's fibers.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>

#include <boost/fiber/condition_variable.hpp>

#include "commitlog/position.h"
#include "commitlog/status.h"
#include "policies/group_hold.h"
#include "tools/kv/fiber_io.h"

namespace commitlog::kv {

// Step 2's bookkeeping: who the last flush answered, who is back, and the
// moving averages the rule needs.
class RoundHold {
 public:
  // A fiber the last flush answered waits again.
  void note_return(TimePoint now) {
    if (++returned_ == released_) all_back_ = now;
  }
  // The end of this round's hold, or nullopt: wait for the log now.
  std::optional<TimePoint> until(TimePoint now, uint64_t waiting, Duration cap) const;
  // Around each wait for the log: `waiting` fibers it answers.
  void flush_started(TimePoint now);
  void flush_finished(TimePoint started, TimePoint now, uint64_t waiting);

 private:
  uint64_t released_ = 0;  // fibers the last flush answered
  uint64_t returned_ = 0;  // of those, waiting again
  std::optional<TimePoint> all_back_;  // when the last of them came back
  TimePoint released_at_{};            // when the last flush ended
  MovingAverage flush_time_;           // the thread's wait for a flush, in ns
  MovingAverage return_time_;          // from a flush until all it answered are back, in ns
};

// Step 3: blocks the calling thread until `position` and every position
// before it are durable; an error when they may never be.
using WaitDurable = std::function<Status(Position position)>;

class ThreadDurability {
 public:
  // Hooks itself to `scheduler`, the calling thread's. `max_hold` bounds
  // step 2 (zero: never hold). Must outlive the thread's fibers.
  ThreadDurability(WaitDurable wait_durable, EpollScheduler& scheduler, Duration max_hold);
  ThreadDurability(const ThreadDurability&) = delete;
  ThreadDurability& operator=(const ThreadDurability&) = delete;

  // Suspends the calling fiber until `position` is durable or a wait failed.
  // `released_by` belongs to the caller (one per connection, initially 0):
  // which flush of this thread answered it last.
  [[nodiscard]] Status wait(Position position, uint64_t& released_by);

 private:
  bool before_sleep();
  // Step 2: true when a wait for the answered connections made fibers ready.
  bool hold();
  void flush();
  bool covered(Position position) const;

  const WaitDurable wait_durable_;
  EpollScheduler& scheduler_;
  const Duration max_hold_;
  std::optional<Position> wanted_;   // the newest position a fiber of this thread waits for
  std::optional<Position> durable_;  // known durable, and everything before it
  Status error_;
  int polls_ = 0;         // step 1 polls of this round so far
  uint64_t flushes_ = 0;  // flushes this thread waited for
  uint64_t waiting_ = 0;  // fibers waiting now
  RoundHold hold_;
  boost::fibers::condition_variable_any durable_cv_;  // this thread's fibers only
};

}  // namespace commitlog::kv
