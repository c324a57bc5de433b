// SPDX-License-Identifier: Apache-2.0
// The log's own thread for making data durable: producers (and the fiber
// schedulers they run on) never make a blocking system call for it.
//
// The loop, each round:
//   1. take the requests: close, a segment that filled up, CommitLog::sync();
//      without one, ask the policy for a plan (SyncPolicy::plan);
//   2. if the plan is due: seal the unfinished segments oldest first (each
//      section's marker), or for a flush hand them to the FlushPipeline,
//      which seals them and makes them durable and advances the durable
//      watermark, waking every producer the flush covers;
//   3. else sleep until the plan's time, or until woken (the states below).
// That is the whole loop; how a flush is staged and committed, overlapped or
// not, is flush_pipeline.h, and the waiting primitive is futex_word.h.
//
// A round may also run on a producer's own thread (lead_flush()): rounds
// are serialized by one mutex, which the thread holds from waking to its next
// sleep, so a round is the same code with the same state on either thread.
//
// A closed segment is always flushed at once, so nothing sealed in a later
// segment becomes durable before it. On an error the pipeline applies the
// commit failure policy; a stopped log plans nothing more.
//
// Thread-safety: the public members may be called from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <thread>

#include "commitlog/util/clock_wait.h"
#include "commitlog/util/futex_word.h"
#include "commitlog/util/mutex.h"
#include "commitlog/write/flush_pipeline.h"

namespace commitlog {

class SyncThread {
 public:
  // `overlap_commits`: the segments are compressed (FlushPipeline).
  // `observer` (may be null) hears of every commit. Every reference outlives
  // the thread.
  SyncThread(Clock& clock, SegmentChain& chain, DurableWaiters& waiters, SyncPolicy& policy,
             CommitFailurePolicy failure_policy, bool overlap_commits,
             CommitObserver* observer = nullptr);
  ~SyncThread();  // stop()

  // A producer wants a flush soon (batch, adaptive): ends a sleep until a
  // planned time too, so the policy plans again at once.
  void request_sync();
  // From a producer that may block its thread (a plain thread, not a fiber),
  // about to wait for its mutation: if the thread sleeps with nothing planned
  // and no commit is in flight, the caller runs the round itself and, when
  // the policy's plan is a flush due now, flushes on its own thread and
  // returns true (LevelDB's and RocksDB's leader); its mutation is then
  // durable unless the flush failed. Otherwise it returns false, and the
  // caller asks the thread (request_sync() or notify_waiter()). `asked`: the
  // round counts as a producer's request_sync() (batch); else the policy
  // plans from the waiters alone (adaptive, whose lone producer so flushes
  // on its own thread as batch's does).
  [[nodiscard]] bool lead_flush(bool asked);
  // A producer started waiting for durability (call it once the producer
  // counts in DurableWaiters::waiting()): ends only an idle sleep; a sleep
  // until a planned time sees the waiter when it ends.
  void notify_waiter();
  // A segment filled up: flush it now.
  void notify_switch();
  // Asks for a flush now (CommitLog::sync()); the caller then waits on the
  // durable watermark.
  void request_explicit_flush();
  // Flushes everything and stops the thread. Call once more at most (the
  // destructor); the second call returns at once.
  void stop();

  const SyncCounters& counters() const { return counters_; }

 private:
  // Where the thread is, ordered by how deeply it sleeps: each sleep is ended
  // by everything that ends the one above it, and more (ended_by()). Only the thread
  // moves itself into a sleep; whoever ends one moves the state back to
  // kRunning and wakes it (wake()), or the sleep's time comes.
  enum class State : uint32_t {
    kRunning,         // planning, sealing or flushing, or waiting for the round a
                      // producer leads. In: the thread, woken or done with a plan.
                      // Out: the thread, into one of the sleeps below.
    kAwaitingCommit,  // a due flush waits for the commit in flight to near its end
                      // (FlushPipeline::stage_point). Out: that time, the commit's
                      // end, the clock moving, stop().
    kUntilPlan,       // until the plan's time. Out: that time, and everything that ends
                      // kAwaitingCommit, request_sync(), notify_switch(),
                      // request_explicit_flush(); not notify_waiter().
    kIdle,            // nothing planned; a producer may run a round meanwhile
                      // (lead_flush). Out: everything above, and notify_waiter().
  };
  // What wakers ask for: bits of requests_, set before the state is read.
  enum Request : uint32_t {
    kSyncAsked = 1,     // request_sync(); stays set until a flush is sealed
    kPoked = 2,         // a producer asked: plan again
    kSwitch = 4,        // notify_switch()
    kExplicit = 8,      // request_explicit_flush()
    kCommitDone = 16,   // an overlapped commit ended: collect it
    kTimeMoved = 32,    // a manual clock moved: read the time again
    kStop = 64,         // stop()
    kWaiter = 128,      // a producer started waiting: plan again unless a time is planned
  };

  void run();
  bool lead_holding_round(bool asked) REQUIRES(round_mu_);
  SyncPlan next_plan(TimePoint now, bool stopping) REQUIRES(round_mu_);
  SyncState snapshot(TimePoint now) const REQUIRES(round_mu_);
  void execute(const SyncPlan& plan) REQUIRES(round_mu_);
  // Sleeps in `state` until `until` or until a request that ends it.
  void sleep(State state, TimePoint until);
  // Sets `requests` and ends the thread's sleep if one of them ends it.
  void wake(uint32_t requests);
  // The requests that end a sleep in `state` (none for kRunning): the one
  // table of which request ends which sleep, read by the sleeper and the waker.
  static constexpr uint32_t ended_by(State state) {
    switch (state) {
      case State::kRunning: return 0;
      case State::kAwaitingCommit: return kCommitDone | kTimeMoved | kStop;
      case State::kUntilPlan: return ~uint32_t{kSyncAsked | kWaiter};
      case State::kIdle: return ~uint32_t{kSyncAsked};
    }
    return 0;
  }
  bool take(Request request) { return (requests_.fetch_and(~uint32_t{request}) & request) != 0; }

  Clock& clock_;
  SegmentChain& chain_;
  DurableWaiters& waiters_;
  SyncPolicy& policy_;
  SyncCounters counters_;
  std::atomic<uint32_t> requests_{0};  // Request bits
  FutexWord state_;                    // a State; every sleep waits on it
  // The round: held by whoever runs one, the thread (but for its sleeps) or
  // a producer in lead_flush().
  Mutex round_mu_;
  TimePoint last_seal_ GUARDED_BY(round_mu_);
  // A plan made and not carried out, taken by the next round instead of
  // asking the policy: due and waiting for the stage point, or made by a
  // producer's round for the thread to sleep on.
  std::optional<SyncPlan> pending_ GUARDED_BY(round_mu_);
  FlushPipeline pipeline_ GUARDED_BY(round_mu_);
  std::thread thread_;
  ClockSubscription clock_moves_;  // last: its callback uses the members above
};

}  // namespace commitlog
