// SPDX-License-Identifier: Apache-2.0
// Public API. A sync policy decides two things, and nothing else:
//   1. after_append(): what a producer does once its mutation is in the
//      segment (return at once, wait for durability, or ask for a sync and
//      wait) -- the one hook, as in Cassandra's commit log services;
//   2. plan(): when the log's sync thread next seals (writes a marker) or
//      flushes (marker plus msync/fdatasync).
// and states one thing, promise(): what an append that follows it
// (AppendWait::kPolicy) is acknowledged with, for callers that wait on their
// own terms.
//
// The hook runs when a producer starts to need its mutation durable: after
// an append that follows the policy (AppendWait::kPolicy), and for an append
// that waits on the caller's terms (kDurable, or kNothing and a later
// CommitLog::wait_durable()) when that wait begins, if the mutation is not
// durable by then. A wait on the caller's terms always waits until durable:
// an answer of kReturn or kWaitForSyncToCatchUp there asks for a sync and
// waits, so plan() must flush soon when sync_requested is set (periodic
// flushes at once).
// The sync thread, the markers and the waking of producers live in
// commitlog/; a policy only answers questions, so it can be tested with
// scripted states and an injected clock.
//
// Thread-safety: after_append() is called concurrently from every producer
// thread and must be cheap; plan() and on_flush() only from the sync thread.
// No hook may throw: the log cannot undo what it did before the call (an
// exception from after_append() leaves the mutation appended, one from the
// sync thread ends the process). A value outside its enum is taken as the
// safest answer: a sync at once, the producer waiting for it.
#pragma once

// One clear message instead of a page of errors from C++20 library features.
#if __cplusplus < 202002L
#error "commitlog needs C++20: compile with -std=c++20 or later"
#else

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "commitlog/clock.h"
#include "commitlog/export.h"

namespace commitlog {

enum class ProducerAction {
  kReturn,                 // acknowledge at once
  kWaitDurable,            // wait until the mutation is durable; wakes the sync
                           // thread only if it is idle (not sleeping until a plan)
  kRequestSyncAndWait,     // wake the sync thread (from any sleep), then wait until durable
  kWaitForSyncToCatchUp,   // wait until a sync started within lag_block completes
};

// What a producer's after_append() may look at.
struct COMMITLOG_EXPORT ProducerView {
  TimePoint now;
  TimePoint last_flush_started;  // start of the last completed flush
};

// What the sync thread knows when it asks for a plan.
struct COMMITLOG_EXPORT SyncState {
  TimePoint now;
  TimePoint last_flush_started;   // of the last completed flush, or of one still
                                  // committing (compressed segments, flush_pipeline.h)
  TimePoint last_flush_finished;
  TimePoint last_seal;            // last seal, with or without flush
  Duration last_flush_duration{};
  bool sync_requested = false;    // a producer asked since the last flush started
  size_t waiting_producers = 0;   // producers waiting for durability now; one a flush
                                  // released counts until its thread or fiber runs
  bool has_unsealed = false;      // anything appended since the last seal
  bool has_unflushed = false;     // anything sealed or appended since the last flush
};

enum class SyncReason {
  kProducerRequest,  // batch: a producer asked
  kWindow,           // group: the window expired
  kPeriod,           // periodic: the period expired
  kMarker,           // periodic: a marker without flush
  kSegmentSwitch,    // a segment filled up
  kExplicit,         // CommitLog::sync()
  kShutdown,         // close()
  kAdaptive,         // adaptive: its own decision (keep last: kSyncReasons)
};
inline constexpr size_t kSyncReasons = static_cast<size_t>(SyncReason::kAdaptive) + 1;
// "producer_request", "window", ...: the metrics' label of each reason.
COMMITLOG_EXPORT const char* sync_reason_name(SyncReason reason);

struct COMMITLOG_EXPORT SyncPlan {
  enum class Kind {
    kIdle,   // nothing to do until a producer appends, waits or asks
    kSeal,   // write a marker (replayable after a process crash), no fsync
    kFlush,  // seal and make durable
  };
  Kind kind = Kind::kIdle;
  TimePoint at{};  // when; a time in the past means now
  SyncReason reason = SyncReason::kWindow;
};

// What an append that follows the policy is acknowledged with.
struct COMMITLOG_EXPORT PolicyPromise {
  // The append returns only once its mutation is durable (batch, group,
  // adaptive); false: it may return before (periodic).
  bool acknowledges_durable = true;
  // The longest plan() holds a flush back, after a producer started
  // waiting, to let more producers join it (group: the window; adaptive:
  // its latency cap; batch: none). A caller that gathers its own group
  // before waiting (commitlog-kv) holds at most this long.
  Duration max_added_delay{};
};

class COMMITLOG_EXPORT SyncPolicy {
 public:
  virtual ~SyncPolicy() = default;
  virtual std::string_view name() const = 0;
  virtual ProducerAction after_append(const ProducerView& view) const = 0;
  virtual SyncPlan plan(const SyncState& state) = 0;
  // After each flush, for policies that learn from measurements.
  virtual void on_flush(Duration /*duration*/, size_t /*mutations*/) {}
  // Constant for the policy's life. The default suits a policy whose
  // producers wait for durability and that adds no delay of its own.
  virtual PolicyPromise promise() const { return {}; }
};

}  // namespace commitlog

#endif  // C++20
