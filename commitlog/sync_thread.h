// The log's own thread for msync/fdatasync: producers (and the fiber
// schedulers they run on) never make a blocking syscall to make data durable.
//
// Each round it asks the policy for a plan, sleeps until the plan's time (or
// until a producer asks, starts waiting, or a segment fills up), then seals
// the unfinished segments oldest first -- writing each section's marker -- and,
// for a flush, makes them durable and advances the durable watermark, which
// wakes every producer the flush covers.
//
// On an error it applies the commit failure policy (see Options). It never
// retries a failed flush and then reports success.
//
// Thread-safety: the public members may be called from any thread.
#pragma once

#include <algorithm>
#include <atomic>
#include <bit>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

#include "commitlog/durable_waiters.h"
#include "commitlog/options.h"
#include "commitlog/segment_chain.h"

namespace commitlog {

struct SyncCounters {
  std::atomic<uint64_t> flushes{0};          // rounds that made data durable
  std::atomic<uint64_t> seals{0};            // marker-only rounds
  std::atomic<uint64_t> flushed_entries{0};  // mutations made durable
  std::atomic<uint64_t> flush_nanos{0};      // time spent in flush rounds
  std::atomic<uint64_t> by_reason[8]{};      // flushes per SyncReason
  // Flushes by group size (mutations they made durable): bucket 0 counts
  // empty flushes, bucket b >= 1 groups of [2^(b-1), 2^b) mutations, the last
  // bucket everything larger.
  static constexpr size_t kGroupSizeBuckets = 24;
  static size_t group_size_bucket(uint64_t mutations) {
    return std::min<size_t>(static_cast<size_t>(std::bit_width(mutations)), kGroupSizeBuckets - 1);
  }
  std::atomic<uint64_t> group_sizes[kGroupSizeBuckets]{};
  // Flushes by duration in µs, in the same log-2 buckets.
  std::atomic<uint64_t> flush_latency_us[kGroupSizeBuckets]{};
};

class SyncThread {
 public:
  SyncThread(SegmentChain& chain, DurableWaiters& waiters, SyncPolicy& policy,
             CommitFailurePolicy failure_policy);
  ~SyncThread();  // stop()

  // A producer wants a flush soon (batch).
  void request_sync();
  // A producer started waiting for durability.
  void notify_waiter();
  // A segment filled up: flush it now.
  void notify_switch();
  // Asks for a flush now (CommitLog::sync()); the caller then waits on the
  // durable watermark.
  void request_explicit_flush();
  // Flushes everything and stops the thread. Idempotent.
  void stop();

  const SyncCounters& counters() const { return counters_; }

 private:
  void run();
  SyncState snapshot(TimePoint now) const;
  void execute(SyncPlan plan);
  void handle_failure(const Status& error);
  void wake();

  SegmentChain& chain_;
  DurableWaiters& waiters_;
  SyncPolicy& policy_;
  const CommitFailurePolicy failure_policy_;
  SyncCounters counters_;

  std::atomic<bool> sync_requested_{false};
  std::atomic<bool> switch_pending_{false};
  std::atomic<bool> explicit_requested_{false};
  std::atomic<bool> poked_{false};  // a producer started waiting: plan again
  std::atomic<bool> sleeping_{false};
  // Sync-thread state.
  TimePoint last_flush_started_, last_flush_finished_, last_seal_;
  Duration last_flush_duration_{};
  bool dead_ = false;  // stopped by a failure

  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;    // guarded by mu_
  bool stopped_ = false;     // guarded by mu_
  std::thread thread_;
};

}  // namespace commitlog
