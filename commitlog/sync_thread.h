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
// Compressed segments: a flush is staged here (seal, LZ4, pwrite) and then
// committed (fdatasync). While flushes keep becoming due during commits and
// staging takes a fair part of a commit (large records, a fast disk), the
// commit runs on a CommitThread, so that while flush N commits, flush N+1 is
// compressed and written; otherwise, and always for a lone producer, it runs
// here, since two thread wake-ups per flush and an earlier seal would cost
// more than they hide. N+1 is sealed when N's commit is expected to end, less
// what staging takes (stage_point()), so the disk does not wait for the CPU
// and N+1 still takes in whoever arrives during N. Its commit starts only
// after N's has succeeded; until then its section headers are held back
// (SegmentStorage::stage()), so no later flush is ever visible on disk before
// an earlier one is durable. Waiters wake, the policy hears of the flush
// (on_flush) and the counters move here, in flush order. Plain segments are
// flushed with one msync on this thread, as before.
//
// Thread-safety: the public members may be called from any thread.
#pragma once

#include <algorithm>
#include <atomic>
#include <bit>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "commitlog/clock_wait.h"
#include "commitlog/commit_observer.h"
#include "commitlog/commit_thread.h"
#include "commitlog/durable_waiters.h"
#include "commitlog/futex_word.h"
#include "commitlog/options.h"
#include "commitlog/segment_chain.h"

namespace commitlog {

struct SyncCounters {
  std::atomic<uint64_t> flushes{0};          // rounds that made data durable
  std::atomic<uint64_t> seals{0};            // marker-only rounds
  std::atomic<uint64_t> flushed_entries{0};  // mutations made durable
  std::atomic<uint64_t> flush_nanos{0};      // time spent in flush rounds
  std::atomic<uint64_t> image_bytes{0};      // segment image bytes flushed
  std::atomic<uint64_t> file_bytes{0};       // the file bytes they took
  std::atomic<uint64_t> by_reason[8]{};      // flushes per SyncReason
  std::atomic<uint64_t> seal_waits{0};       // seals that waited for a producer's entry
  std::atomic<uint64_t> seal_wait_nanos{0};  // ... and how long
  SpinCounters idle_spins;                   // idle sleeps that spun first
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
  // `overlap_commits`: run commits on a CommitThread (compressed segments).
  // `spin_limit`: the longest the thread spins before an idle sleep, after a
  // flush whose waiter spun for it, while producers came back within the
  // limit (Options::spin_wait). `observer`, if set, hears of every
  // successful flush and must outlive the thread.
  SyncThread(Clock& clock, SegmentChain& chain, DurableWaiters& waiters, SyncPolicy& policy,
             CommitFailurePolicy failure_policy, bool overlap_commits = false,
             Duration spin_limit = Duration::zero(), CommitObserver* observer = nullptr);
  ~SyncThread();  // stop()

  // A producer wants a flush soon (batch, adaptive): wakes the thread from a
  // sleep until a planned time too, so the policy plans again at once.
  void request_sync();
  // A producer started waiting for durability (call it once the producer
  // counts in DurableWaiters::waiting()): wakes the thread only from an idle
  // sleep; a sleep until a planned time sees the waiter when it ends.
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
  // segment.seal(), counting the waits for producers' entries.
  void seal(MappedSegment& segment);
  // Waiters, counters and the policy, after a flush made `durable` durable.
  void flushed(SyncReason reason, TimePoint started, TimePoint finished, Duration duration,
               uint64_t entries, uint64_t image_bytes, uint64_t file_bytes, uint64_t durable);
  void handle_failure(const Status& error);
  // Overlapped commits (compressed segments). -------------------------------
  struct Flush {
    struct Item {
      MappedSegment* segment;
      MappedSegment::Staged staged;
      uint64_t entries;
    };
    std::vector<Item> items;  // committed in this order
    uint64_t durable = 0;     // packed position durable once all are committed
    SyncReason reason{};
    TimePoint started;  // its seal began
    // Written by the commit thread, read after CommitThread::wait().
    size_t committed = 0;  // items committed
    TimePoint commit_started, commit_finished;
  };
  void stage_flush(SyncPlan plan, const std::vector<MappedSegment*>& segments);
  Status commit(Flush& flush);  // on the commit thread, or inline
  void collect_commit();        // waits for the commit in flight, then finish_commit()
  void finish_commit(Flush flush, const Status& status);
  TimePoint stage_point() const;
  bool worth_overlapping() const;
  // How deeply the thread sleeps: who may wake it. Ordered, deepest last.
  enum class Sleep : uint32_t {
    kAwake,
    kUntilCommit,   // a due flush waits for its stage point: the commit's end wakes it
    kUntilPlan,     // until the plan's time: requests, switches and commits wake it
    kIdle,          // no plan: a new waiter wakes it too
    kSpinningIdle,  // kIdle, spinning before its futex wait: woken without a system call
  };
  static constexpr uint32_t word(Sleep sleep) { return static_cast<uint32_t>(sleep); }
  // Wakes the thread if it sleeps at least this deeply.
  void wake(Sleep at_least);
  // The idle sleep, spinning first if sleep_ says kSpinningIdle.
  void sleep_idle();
  bool idle_spin_pays() const;

  Clock& clock_;
  SegmentChain& chain_;
  DurableWaiters& waiters_;
  SyncPolicy& policy_;
  const CommitFailurePolicy failure_policy_;
  CommitObserver* const observer_;
  SyncCounters counters_;

  std::atomic<bool> sync_requested_{false};
  std::atomic<bool> switch_pending_{false};
  std::atomic<bool> explicit_requested_{false};
  std::atomic<bool> poked_{false};  // a producer asked or started waiting: plan again
  std::atomic<bool> time_moved_{false};  // a manual clock moved: check the time again
  FutexWord sleep_;  // a Sleep; an idle sleep is a futex wait on it
  // Sync-thread state.
  TimePoint last_flush_started_, last_flush_finished_, last_seal_;
  Duration last_flush_duration_{};
  const Duration spin_limit_;
  bool released_spinner_ = false;  // the last flush's waiter was spinning for it
  Duration idle_gap_{};  // from the last flush's end to the end of the last idle sleep
  bool dead_ = false;  // stopped by a failure
  std::optional<Flush> in_flight_;   // committing on committer_
  std::optional<SyncPlan> pending_;  // due, waiting for stage_point()
  bool overlap_ = false;             // commit the next flush on committer_
  bool overlapped_ = false;          // a flush became due while in_flight_ committed
  std::vector<Flush::Item> retry_;   // of a failed commit (commit_failure_policy ignore)
  TimePoint commit_started_, last_commit_finished_;
  Duration commit_estimate_{}, stage_estimate_{};  // moving averages
  std::atomic<bool> commit_done_{false};  // set by committer_ after a commit: collect it

  std::mutex mu_;
  std::condition_variable cv_;  // the timed sleeps
  bool stopping_ = false;    // guarded by mu_
  bool stopped_ = false;     // guarded by mu_
  std::thread thread_;
  std::unique_ptr<CommitThread> committer_;  // its on_done uses the members above
  std::optional<ClockSubscription> clock_moves_;  // last: wakes the timed sleeps
};

}  // namespace commitlog
