// SPDX-License-Identifier: Apache-2.0
#include "commitlog/write/flush_pipeline.h"

#include <algorithm>
#include <iterator>

#include "commitlog/write/failure_policy.h"

namespace commitlog {
namespace {

// Overlap pays only when staging takes at least this fraction of a commit:
// below it, sealing a flush ahead of the commit's end loses more producers
// to the flush after (a whole fdatasync later) than the hidden staging gains.
constexpr int kWorthHiding = 8;  // 1/8

}  // namespace

// Sealing the next flush early keeps the disk busy, but whoever arrives after
// that seal waits for the flush after it, one whole fdatasync more; sealing
// when the running commit ends takes everyone in but leaves the disk idle
// while the flush is compressed and written. So the next flush is sealed when
// the running commit is expected to end, less twice what staging takes (the
// margin covers a late wake-up: at worst the disk then waits as long as
// without overlap). With no estimate yet, or staging as slow as a commit,
// that is at once, and the commits run back to back.
TimePoint OverlapEstimate::stage_point() const { return commit_started + commit.duration() - 2 * stage.duration(); }

bool OverlapEstimate::worth_it() const { return stage.duration() * kWorthHiding >= commit.duration(); }

FlushPipeline::FlushPipeline(Clock& clock, SegmentChain& chain, DurableWaiters& waiters,
                             SyncPolicy& policy, SyncCounters& counters,
                             CommitFailurePolicy failure_policy, bool may_overlap,
                             CommitObserver* observer, std::function<void()> on_commit_done)
    : clock_(clock),
      chain_(chain),
      waiters_(waiters),
      policy_(policy),
      counters_(counters),
      failure_policy_(failure_policy),
      observer_(observer) {
  timing_.started = timing_.finished = estimate_.last_commit_finished = clock_.now();
  if (may_overlap) committer_ = std::make_unique<CommitThread>(std::move(on_commit_done));
}

FlushPipeline::~FlushPipeline() { collect(/*wait=*/true); }

void seal_segment(MappedSegment& segment, SyncCounters& counters) {
  segment.seal();
  const MappedSegment::PublishWaits waits = segment.take_publish_waits();
  if (waits.seals == 0) return;
  counters.seal_waits.fetch_add(waits.seals, std::memory_order_relaxed);
  counters.seal_wait_nanos.fetch_add(waits.nanos, std::memory_order_relaxed);
}

// Inline, each segment is committed before the next one is sealed: a mapped
// segment's marker is in the file as soon as it is written, and a later
// segment's sealed data must never be on disk while an earlier segment's end
// is not durable. Overlapped (compressed segments only), the held section
// headers keep that order instead.
void FlushPipeline::flush(SyncReason reason, TimePoint started,
                          const std::vector<MappedSegment*>& segments,
                          const std::function<bool()>& asked) {
  const bool overlap = committer_ != nullptr && estimate_.overlap;
  if (!overlap) collect(/*wait=*/true);
  if (stopped_) return;
  Flush flush;
  flush.reason = reason;
  flush.started = started;
  // Headers are held back while anything a reader may already see is not
  // durable yet: the flush in flight, a failed one, this one's earlier segments.
  bool hold = overlap && (in_flight_.has_value() || !retry_.empty());
  // A failed commit's writes go first (commit_failure_policy ignore); while
  // overlapping, once the commit in flight is collected.
  if (!overlap) flush.items = std::exchange(retry_, {});
  Status status;
  flush.commit_started = clock_.now();
  if (!overlap) status = commit(flush);
  Duration staging{};
  for (MappedSegment* segment : segments) {
    if (!status.ok()) break;
    const TimePoint stage_started = clock_.now();
    seal_segment(*segment, counters_);
    auto staged = segment->stage(hold);
    staging += clock_.now() - stage_started;
    if (!staged.ok()) {
      status = staged.status();
      break;
    }
    hold = overlap && (hold || !staged->write.empty());
    flush.durable = DurableWaiters::pack(chain_.ordinal(*segment), staged->tail);
    flush.items.push_back({segment, std::move(staged).value(), segment->take_sealed_entries()});
    if (!overlap) status = commit(flush);
  }
  estimate_.stage.add(staging);
  // This flush's commit starts only once the one in flight has succeeded.
  collect(/*wait=*/true);
  flush.items.insert(flush.items.begin(), std::make_move_iterator(retry_.begin()),
                     std::make_move_iterator(retry_.end()));
  retry_.clear();
  if (!overlap || !status.ok()) {
    flush.commit_finished = clock_.now();
    // Whoever arrived meanwhile had to wait for this commit: overlap the next.
    // A lone producer never makes one due, and keeps the inline commit that
    // costs no thread hand-offs.
    estimate_.overlap = committer_ && estimate_.worth_it() &&
                        (asked() || std::any_of(segments.begin(), segments.end(),
                                                [](const MappedSegment* s) { return s->has_unsealed(); }));
    finish(std::move(flush), status);
    return;
  }
  if (stopped_) return;
  estimate_.commit_started = clock_.now();
  estimate_.overlapped = false;
  in_flight_.emplace(std::move(flush));
  committer_->start([this] {
    Flush& flush = *in_flight_;
    flush.commit_started = clock_.now();
    Status status = commit(flush);
    flush.commit_finished = clock_.now();
    return status;
  });
}

void FlushPipeline::collect(bool wait) {
  if (!in_flight_ || (!wait && !committer_->done())) return;
  const Status status = committer_->wait();
  Flush flush = std::move(*in_flight_);
  in_flight_.reset();
  // Overlap goes on while flushes become due during commits.
  estimate_.overlap = estimate_.overlapped && estimate_.worth_it();
  finish(std::move(flush), status);
}

// The items not committed yet, in order, stopping at the first failure, so
// that no segment becomes durable before an earlier one.
Status FlushPipeline::commit(Flush& flush) {
  for (; flush.committed < flush.items.size(); ++flush.committed) {
    const Item& item = flush.items[flush.committed];
    CL_RETURN_IF_ERROR(item.segment->commit(item.staged));
  }
  return {};
}

void FlushPipeline::finish(Flush flush, const Status& status) {
  for (size_t i = 0; i < flush.committed; ++i) {
    const Item& item = flush.items[i];
    item.segment->committed(item.staged);
    if (observer_ != nullptr && !item.staged.write.empty()) {
      observer_->on_durable(*item.segment, item.segment->durable_offset());
    }
  }
  if (!status.ok()) {
    // Committed again, held headers and all, with the next flush if the log
    // goes on.
    retry_.assign(
        std::make_move_iterator(flush.items.begin() + static_cast<ptrdiff_t>(flush.committed)),
        std::make_move_iterator(flush.items.end()));
    estimate_.last_commit_finished = clock_.now();
    fail(flush.started, status);
    return;
  }
  estimate_.commit.add(flush.commit_finished - flush.commit_started);
  // A flush staged while the previous one committed cost only what came after
  // that commit: the policy learns the time each flush adds.
  const Duration duration =
      flush.commit_finished - std::max(flush.started, estimate_.last_commit_finished);
  estimate_.last_commit_finished = flush.commit_finished;
  uint64_t entries = 0, image_bytes = 0, file_bytes = 0;
  for (const Item& item : flush.items) {
    entries += item.entries;
    image_bytes += item.staged.write.image_bytes;
    file_bytes += item.staged.write.file_bytes;
  }
  timing_ = {flush.started, flush.commit_finished, duration};
  chain_.retire_finished();
  // Counted before the waiters wake, so a woken producer sees its flush counted.
  counters_.count_flush(flush.reason, duration, entries, image_bytes, file_bytes);
  policy_.on_flush(duration, entries);
  waiters_.note_flush(entries);
  waiters_.advance(flush.durable, flush.started);
}

// A failed flush counts as one for the policy's timing: a disk that keeps
// failing (commit_failure_policy ignore) is retried once per window or
// period, not in a busy loop.
void FlushPipeline::fail(TimePoint started, const Status& error) {
  counters_.sync_failures.fetch_add(1, std::memory_order_relaxed);
  timing_.started = started;
  timing_.finished = clock_.now();
  stopped_ = apply_failure_policy(failure_policy_, "sync", error, waiters_);
}

}  // namespace commitlog
