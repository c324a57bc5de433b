// SPDX-License-Identifier: Apache-2.0
// Makes segments durable for the round (sync_thread.h), in flush
// order, through each segment's one protocol: seal (markers), stage (the
// bytes on their way to the file), commit (durable), committed. After a commit the
// segments, the counters, the policy (on_flush), the CommitObserver and the
// durable watermark learn it, in that order, so a woken producer sees its
// flush counted.
//
// A flush's commit runs inline, in the round, unless overlapping pays:
// only for compressed segments (their staging is real work: LZ4 and pwrite),
// while flushes keep becoming due during commits and staging takes a fair
// part of a commit. Then the commit runs on a CommitThread, so that flush
// N+1 is compressed and written while flush N's fdatasync runs. N+1 is
// sealed at stage_point(); its commit starts only once N's has succeeded,
// and until then its section headers are held back (SegmentStorage::stage),
// so no later flush is ever visible on disk before an earlier one is durable.
//
// A failed stage or commit applies the commit failure policy. Under
// `ignore`, what was staged and not committed is committed again, first,
// with the next flush (the retry list). A failure never reads as success.
//
// Thread-safety: whoever holds the round calls every member; `on_commit_done` runs on
// the commit thread after each overlapped commit.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "commitlog/cdc/commit_observer.h"
#include "commitlog/write/commit_thread.h"
#include "commitlog/write/durable_waiters.h"
#include "commitlog/options.h"
#include "commitlog/lifecycle/segment_chain.h"
#include "commitlog/write/sync_counters.h"
#include "policies/moving_average.h"

namespace commitlog {

// When overlapping pays, from moving averages of the time staging and
// commits take (about the last four flushes).
struct OverlapEstimate {
  MovingAverage commit, stage;
  TimePoint commit_started, last_commit_finished;
  bool overlap = false;     // commit the next flush on the commit thread
  bool overlapped = false;  // a flush became due while one committed
  TimePoint stage_point() const;
  bool worth_it() const;
};

// Seals `segment` (MappedSegment::seal), counting its waits for producers.
void seal_segment(MappedSegment& segment, SyncCounters& counters);

class FlushPipeline {
 public:
  // For the policy's SyncState.
  struct Timing {
    TimePoint started, finished;  // of the last flush that ended (or failed)
    Duration duration{};          // the time it added
  };
  // `may_overlap`: the segments are compressed. Every reference outlives the
  // pipeline; `observer` may be null.
  FlushPipeline(Clock& clock, SegmentChain& chain, DurableWaiters& waiters, SyncPolicy& policy,
                SyncCounters& counters, CommitFailurePolicy failure_policy, bool may_overlap,
                CommitObserver* observer, std::function<void()> on_commit_done);
  ~FlushPipeline();  // collects the commit in flight

  // Seals `segments` (oldest first) and makes them durable, or starts their
  // commit on the commit thread. `started`: when the flush began. `asked`
  // tells whether a producer asked for a flush since this one was sealed.
  void flush(SyncReason reason, TimePoint started, const std::vector<MappedSegment*>& segments,
             const std::function<bool()>& asked);
  // An overlapped commit is running.
  bool committing() const { return in_flight_.has_value(); }
  // Finishes the overlapped commit if it has ended, or with `wait` once it ends.
  void collect(bool wait);
  // A flush became due while a commit ran: overlapping goes on.
  void note_due_while_committing() { estimate_.overlapped = true; }
  // The earliest a due flush is sealed while a commit runs.
  TimePoint stage_point() const { return estimate_.stage_point(); }
  // The start of the flush in flight, else of the last one that ended.
  TimePoint last_started() const { return in_flight_ ? in_flight_->started : timing_.started; }
  const Timing& timing() const { return timing_; }
  // Staged writes of a failed commit wait for the next flush.
  bool retrying() const { return !retry_.empty(); }
  // A failure stopped the log (commit_failure_policy stop or stop_commit).
  bool stopped() const { return stopped_; }

 private:
  struct Item {
    MappedSegment* segment;
    MappedSegment::Staged staged;
    uint64_t entries;
  };
  struct Flush {
    std::vector<Item> items;  // committed in this order
    uint64_t durable = 0;     // packed position durable once all are committed
    SyncReason reason{};
    TimePoint started;  // its seal began
    // Written by the commit thread, read once it is collected.
    size_t committed = 0;
    TimePoint commit_started, commit_finished;
  };
  Status commit(Flush& flush);  // on the commit thread, or inline
  void finish(Flush flush, const Status& status);
  void fail(TimePoint started, const Status& error);

  Clock& clock_;
  SegmentChain& chain_;
  DurableWaiters& waiters_;
  SyncPolicy& policy_;
  SyncCounters& counters_;
  const CommitFailurePolicy failure_policy_;
  CommitObserver* const observer_;
  Timing timing_;
  bool stopped_ = false;
  OverlapEstimate estimate_;
  std::vector<Item> retry_;      // of a failed commit (commit_failure_policy ignore)
  std::optional<Flush> in_flight_;  // committing on committer_
  std::unique_ptr<CommitThread> committer_;  // last: its job uses in_flight_
};

}  // namespace commitlog
