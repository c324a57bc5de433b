#include "commitlog/sync_thread.h"

#include <algorithm>
#include <iterator>

#include "commitlog/failure_policy.h"
#include "commitlog/thread_name.h"

namespace commitlog {
namespace {

// Overlap pays only when staging takes at least this fraction of a commit:
// below it, sealing a flush ahead of the commit's end loses more producers
// to the flush after (a whole fdatasync later) than the hidden staging gains:
// small records stage in a few percent of an fdatasync, and overlapping them
// makes the groups smaller.
constexpr int kWorthHiding = 8;  // 1/8

// Moves a moving average a quarter of the way to `sample`: about the last
// four flushes count, as in the adaptive policy.
void average_in(Duration& average, Duration sample) {
  average = average == Duration::zero() ? sample : average + (sample - average) / 4;
}

}  // namespace

SyncThread::SyncThread(Clock& clock, SegmentChain& chain, DurableWaiters& waiters,
                       SyncPolicy& policy, CommitFailurePolicy failure_policy,
                       bool overlap_commits, Duration spin_limit, CommitObserver* observer)
    : clock_(clock),
      chain_(chain),
      waiters_(waiters),
      policy_(policy),
      failure_policy_(failure_policy),
      observer_(observer),
      spin_limit_(spin_limit) {
  const TimePoint now = clock_.now();
  last_flush_started_ = last_flush_finished_ = last_seal_ = last_commit_finished_ = now;
  waiters_.advance(0, now);
  if (overlap_commits) {
    committer_ = std::make_unique<CommitThread>([this] {
      commit_done_.store(true);
      wake(Sleep::kUntilCommit);
    });
  }
  clock_moves_.emplace(clock_, [this] {
    time_moved_.store(true);
    wake(Sleep::kUntilCommit);
  });
  thread_ = std::thread([this] { run(); });
}

SyncThread::~SyncThread() { stop(); }

// Producers set their flag (and poked_) first and read sleep_ second; the
// thread sets sleep_ first and reads the flags second (all seq_cst), so either
// the producer sees the thread asleep and wakes it, or the thread sees the flag.
//
// An idle sleep is a futex wait on sleep_ itself, ended by whoever moves it
// from kIdle to kAwake: one system call on each side and no mutex. A sleep on
// the condition variable would, on waking, re-take mu_ marked contended, and
// glibc then makes one more futex call to unlock it -- on the critical path
// of a lone producer's every flush.
//
// A spinning idle sleep watches sleep_ itself: moving it to kAwake is the
// whole wake-up. If the thread gave up spinning first (kIdle now), the
// wake-up is the futex's.
void SyncThread::wake(Sleep at_least) {
  while (true) {
    const Sleep sleep = static_cast<Sleep>(sleep_.load());
    if (sleep < at_least) return;
    if (sleep == Sleep::kSpinningIdle) {
      if (sleep_.compare_exchange(word(Sleep::kSpinningIdle), word(Sleep::kAwake))) return;
      continue;
    }
    if (sleep == Sleep::kIdle) {
      // Failing, it is awake already, or woke and will read the flags again
      // after its next sleep_ store.
      if (sleep_.compare_exchange(word(Sleep::kIdle), word(Sleep::kAwake))) sleep_.wake_one();
      return;
    }
    std::lock_guard lock(mu_);
    cv_.notify_one();
    return;
  }
}

// The other half of DurableWaiters' lone-waiter spin: after a flush of one
// mutation, a lone producer's next request comes a reply and a round trip
// later (a few tens of µs in commitlog-kv with one client), and waking a
// sleeping thread costs a sizeable part of that. The thread spins only
// after a flush whose waiter was spinning, so runs on a CPU of its own: a
// sleeping waiter is woken onto the CPU of the thread that woke it, which
// would then spin in its way. And only while that gap stayed within the
// limit: a slow client or an idle log sends it straight to sleep.
bool SyncThread::idle_spin_pays() const {
  return spin_limit_ > Duration::zero() && released_spinner_ && idle_gap_ <= spin_limit_;
}

void SyncThread::sleep_idle() {
  if (sleep_.load() == word(Sleep::kSpinningIdle)) {
    spin_until(clock_, [this] { return sleep_.load() != word(Sleep::kSpinningIdle); }, spin_limit_,
               counters_.idle_spins);
    sleep_.compare_exchange(word(Sleep::kSpinningIdle), word(Sleep::kIdle));
  }
  while (sleep_.load() == word(Sleep::kIdle)) sleep_.wait(word(Sleep::kIdle));
  idle_gap_ = clock_.now() - last_flush_finished_;
}

void SyncThread::request_sync() {
  sync_requested_.store(true);
  poked_.store(true);
  wake(Sleep::kUntilPlan);
}

// A timed sleep ends by itself at the plan's time and re-plans then, with this
// waiter counted: waking it now would only re-plan the same plan (under a
// hold or a group window, once per arriving producer). A policy that wants an
// earlier end asks with kRequestSyncAndWait.
void SyncThread::notify_waiter() {
  poked_.store(true);
  wake(Sleep::kIdle);
}

void SyncThread::notify_switch() {
  switch_pending_.store(true);
  wake(Sleep::kUntilPlan);
}

void SyncThread::request_explicit_flush() {
  explicit_requested_.store(true);
  wake(Sleep::kUntilPlan);
}

void SyncThread::stop() {
  {
    std::lock_guard lock(mu_);
    if (stopped_) return;
    stopped_ = true;
    stopping_ = true;
  }
  wake(Sleep::kUntilCommit);
  thread_.join();
}

SyncState SyncThread::snapshot(TimePoint now) const {
  SyncState s;
  s.now = now;
  // A flush still committing has started: the next one is planned from it.
  s.last_flush_started = in_flight_ ? in_flight_->started : last_flush_started_;
  s.last_flush_finished = last_flush_finished_;
  s.last_seal = last_seal_;
  s.last_flush_duration = last_flush_duration_;
  s.sync_requested = sync_requested_.load();
  s.waiting_producers = waiters_.waiting();
  for (MappedSegment* segment : chain_.unfinished()) {
    s.has_unsealed = s.has_unsealed || segment->has_unsealed();
    s.has_unflushed = s.has_unflushed || segment->has_unflushed();
  }
  return s;
}

void SyncThread::run() {
  name_this_thread("cl-sync");
  std::unique_lock lock(mu_);
  while (true) {
    const bool stopping = stopping_;
    lock.unlock();
    if (in_flight_ && committer_->done()) collect_commit();
    const TimePoint now = clock_.now();
    SyncPlan plan;
    if (stopping) {
      plan = {SyncPlan::Kind::kFlush, now, SyncReason::kShutdown};
    } else if (pending_) {
      plan = *pending_;
    } else if (switch_pending_.exchange(false)) {
      plan = {SyncPlan::Kind::kFlush, now, SyncReason::kSegmentSwitch};
    } else if (explicit_requested_.exchange(false)) {
      plan = {SyncPlan::Kind::kFlush, now, SyncReason::kExplicit};
    } else if (!dead_) {
      plan = policy_.plan(snapshot(now));
    }
    // A flush due while a commit runs waits for its stage point.
    const TimePoint at = plan.kind == SyncPlan::Kind::kFlush && in_flight_ && !stopping
                             ? std::max(plan.at, stage_point())
                             : plan.at;
    pending_.reset();
    if (plan.kind == SyncPlan::Kind::kFlush && plan.at <= now && in_flight_) overlapped_ = true;
    if (plan.kind != SyncPlan::Kind::kIdle && at <= now && !dead_) {
      execute(plan);
    } else if (plan.kind != SyncPlan::Kind::kIdle && plan.at <= now && !dead_) {
      // Kept rather than planned again: a policy may count a plan it made as
      // a flush started (adaptive).
      pending_ = plan;
    }
    if (stopping && in_flight_) collect_commit();
    lock.lock();
    if (stopping) return;
    if (plan.kind != SyncPlan::Kind::kIdle && at <= now) continue;
    // Checked under mu_: a producer that set its flag after this check sees
    // sleep_ and either notifies under mu_, which it can only take once this
    // thread is inside wait(), or (idle) moves sleep_ on, which ends the
    // futex wait whenever it starts. So no wake-up is lost. sync_requested_
    // is a level (it stays set until the next flush), so it is seen through
    // poked_, which each request sets again. A flush waiting for its stage
    // point covers whatever producers ask for meanwhile: only the end of the
    // commit in flight moves it.
    const bool idle = plan.kind == SyncPlan::Kind::kIdle || dead_;
    const Sleep idle_sleep = !dead_ && idle_spin_pays() ? Sleep::kSpinningIdle : Sleep::kIdle;
    sleep_.store(word(pending_ ? Sleep::kUntilCommit : idle ? idle_sleep : Sleep::kUntilPlan));
    const bool poked = time_moved_.exchange(false) ||
                       (pending_ ? commit_done_.exchange(false)
                                 : poked_.exchange(false) || switch_pending_.load() ||
                                       explicit_requested_.load() || commit_done_.exchange(false));
    if (!poked && !stopping_) {
      if (idle) {
        lock.unlock();
        sleep_idle();
        lock.lock();
      } else {
        const TimePoint wake_at = clock_.wake_by_itself_at(at);
        if (wake_at == TimePoint::max()) {
          cv_.wait(lock);
        } else {
          cv_.wait_until(lock, wake_at);
        }
      }
    }
    sleep_.store(word(Sleep::kAwake));
  }
}

void SyncThread::execute(SyncPlan plan) {
  const std::vector<MappedSegment*> segments = chain_.unfinished();
  // A closed segment is always flushed at once, so nothing sealed in a later
  // segment can become durable before it (Cassandra's switch sync).
  bool flush = plan.kind == SyncPlan::Kind::kFlush;
  for (MappedSegment* segment : segments) flush = flush || segment->closed();
  if (!flush) {
    for (MappedSegment* segment : segments) seal(*segment);
    last_seal_ = clock_.now();
    counters_.seals.fetch_add(1, std::memory_order_relaxed);
    chain_.active()->prepare_ahead();
    return;
  }
  if (committer_) {
    stage_flush(plan, segments);
    return;
  }
  // Cleared before sealing: a producer that asks from here on rides the next flush.
  sync_requested_.store(false);
  const TimePoint started = clock_.now();
  uint64_t durable = 0;
  uint64_t entries = 0, image_bytes = 0, file_bytes = 0;
  for (MappedSegment* segment : segments) {
    seal(*segment);
    const uint64_t image_before = segment->image_bytes_persisted();
    const uint64_t file_before = segment->file_bytes_written();
    auto tail = segment->flush();
    if (!tail.ok()) {
      // A failed flush counts as one for the policy's timing: a disk that
      // keeps failing (commit_failure_policy ignore) is retried once per
      // window or period, not in a busy loop.
      last_flush_started_ = started;
      last_flush_finished_ = clock_.now();
      handle_failure(tail.status());
      return;
    }
    durable = DurableWaiters::pack(chain_.ordinal(*segment), *tail);
    entries += segment->take_sealed_entries();
    image_bytes += segment->image_bytes_persisted() - image_before;
    file_bytes += segment->file_bytes_written() - file_before;
  }
  const TimePoint finished = clock_.now();
  flushed(plan.reason, started, finished, finished - started, entries, image_bytes, file_bytes,
          durable);
  // After the waiters are woken: their latency does not include it.
  chain_.active()->prepare_ahead();
}

void SyncThread::seal(MappedSegment& segment) {
  segment.seal();
  const MappedSegment::PublishWaits waits = segment.take_publish_waits();
  if (waits.seals == 0) return;
  counters_.seal_waits.fetch_add(waits.seals, std::memory_order_relaxed);
  counters_.seal_wait_nanos.fetch_add(waits.nanos, std::memory_order_relaxed);
}

void SyncThread::flushed(SyncReason reason, TimePoint started, TimePoint finished,
                         Duration duration, uint64_t entries, uint64_t image_bytes,
                         uint64_t file_bytes, uint64_t durable) {
  last_seal_ = std::max(last_seal_, finished);
  last_flush_finished_ = finished;
  last_flush_started_ = started;
  last_flush_duration_ = duration;
  // The one place a flush's durable offsets become known, before its
  // waiters wake and its finished segments are retired.
  if (observer_ != nullptr) observer_->committed(chain_.unfinished());
  chain_.retire_finished();
  // Counted before the waiters wake, so a woken producer sees its flush counted.
  counters_.flushes.fetch_add(1, std::memory_order_relaxed);
  counters_.flushed_entries.fetch_add(entries, std::memory_order_relaxed);
  counters_.flush_nanos.fetch_add(static_cast<uint64_t>(last_flush_duration_.count()),
                                  std::memory_order_relaxed);
  counters_.image_bytes.fetch_add(image_bytes, std::memory_order_relaxed);
  counters_.file_bytes.fetch_add(file_bytes, std::memory_order_relaxed);
  counters_.by_reason[static_cast<size_t>(reason) % 8].fetch_add(1, std::memory_order_relaxed);
  counters_.group_sizes[SyncCounters::group_size_bucket(entries)].fetch_add(1, std::memory_order_relaxed);
  const auto flush_us = std::chrono::duration_cast<std::chrono::microseconds>(last_flush_duration_).count();
  counters_.flush_latency_us[SyncCounters::group_size_bucket(static_cast<uint64_t>(flush_us))].fetch_add(
      1, std::memory_order_relaxed);
  policy_.on_flush(last_flush_duration_, entries);
  waiters_.note_flush(entries);
  released_spinner_ = waiters_.waiter_spinning();
  waiters_.advance(durable, started);
}

// Overlapped commits (compressed segments). ---------------------------------

// Sealing the next flush early keeps the disk busy, but whoever arrives after
// that seal waits for the flush after it, one whole fdatasync more; sealing
// when the running commit ends takes everyone in but leaves the disk idle
// while the flush is compressed and written. So the next flush is sealed when
// the running commit is expected to end, less twice what staging takes (the
// margin covers a late wake-up: at worst the disk then waits as long as
// without overlap). With no estimate yet, or staging as slow as a commit,
// that is at once, and the commits run back to back.
TimePoint SyncThread::stage_point() const {
  return commit_started_ + commit_estimate_ - 2 * stage_estimate_;
}

bool SyncThread::worth_overlapping() const {
  return stage_estimate_ * kWorthHiding >= commit_estimate_;
}

void SyncThread::stage_flush(SyncPlan plan, const std::vector<MappedSegment*>& segments) {
  // Cleared before sealing: a producer that asks from here on rides the next flush.
  sync_requested_.store(false);
  Flush flush;
  flush.reason = plan.reason;
  flush.started = clock_.now();
  // Headers are held back while anything a reader may already see is not
  // durable yet: the flush in flight, a failed one, this one's earlier segments.
  bool hold = in_flight_.has_value() || !retry_.empty();
  std::vector<Flush::Item> items;
  Status error;
  for (MappedSegment* segment : segments) {
    seal(*segment);
    auto staged = segment->stage(hold);
    if (!staged.ok()) {
      error = staged.status();
      break;
    }
    hold = hold || !staged->write.empty();
    flush.durable = DurableWaiters::pack(chain_.ordinal(*segment), staged->tail);
    items.push_back({segment, std::move(staged).value(), segment->take_sealed_entries()});
  }
  average_in(stage_estimate_, clock_.now() - flush.started);
  // This flush's commit starts only once the one in flight has succeeded.
  if (in_flight_) collect_commit();
  // A failed commit's writes go first (commit_failure_policy ignore).
  flush.items = std::exchange(retry_, {});
  std::move(items.begin(), items.end(), std::back_inserter(flush.items));
  if (!error.ok()) {
    retry_ = std::move(flush.items);  // written: committed with the next flush
    last_flush_started_ = flush.started;
    last_flush_finished_ = clock_.now();
    handle_failure(error);
    return;
  }
  if (dead_) return;
  commit_started_ = clock_.now();
  if (!overlap_) {
    // Handing the commit to the commit thread costs two thread wake-ups and
    // an earlier seal; it pays only while flushes become due during commits
    // and staging is worth hiding. A lone producer never makes one due.
    const Status status = commit(flush);
    // Whoever arrived meanwhile had to wait for this commit: overlap the next.
    overlap_ = worth_overlapping() &&
               (sync_requested_.load() ||
                std::any_of(segments.begin(), segments.end(),
                            [](const MappedSegment* s) { return s->has_unsealed(); }));
    finish_commit(std::move(flush), status);
    return;
  }
  overlapped_ = false;
  in_flight_.emplace(std::move(flush));
  committer_->start([this] { return commit(*in_flight_); });
}

void SyncThread::collect_commit() {
  const Status status = committer_->wait();
  Flush flush = std::move(*in_flight_);
  in_flight_.reset();
  // Overlap goes on while flushes become due during commits.
  overlap_ = overlapped_ && worth_overlapping();
  finish_commit(std::move(flush), status);
}

// On the commit thread. Items in order, stopping at the first failure, so
// that no segment becomes durable before an earlier one.
Status SyncThread::commit(Flush& flush) {
  flush.commit_started = clock_.now();
  for (; flush.committed < flush.items.size(); ++flush.committed) {
    const Flush::Item& item = flush.items[flush.committed];
    CL_RETURN_IF_ERROR(item.segment->commit(item.staged));
  }
  flush.commit_finished = clock_.now();
  return {};
}

void SyncThread::finish_commit(Flush flush, const Status& status) {
  for (size_t i = 0; i < flush.committed; ++i) {
    flush.items[i].segment->committed(flush.items[i].staged);
  }
  if (!status.ok()) {
    // Committed again, held headers and all, with the next flush if the log
    // goes on; a failed commit counts as a flush for the policy's timing.
    retry_.assign(
        std::make_move_iterator(flush.items.begin() + static_cast<ptrdiff_t>(flush.committed)),
        std::make_move_iterator(flush.items.end()));
    last_flush_started_ = flush.started;
    last_flush_finished_ = last_commit_finished_ = clock_.now();
    handle_failure(status);
    return;
  }
  average_in(commit_estimate_, flush.commit_finished - flush.commit_started);
  // A flush staged while the previous one committed cost only what came after
  // that commit: the policy learns the time each flush adds.
  const Duration duration = flush.commit_finished - std::max(flush.started, last_commit_finished_);
  last_commit_finished_ = flush.commit_finished;
  uint64_t entries = 0, image_bytes = 0, file_bytes = 0;
  for (const Flush::Item& item : flush.items) {
    entries += item.entries;
    image_bytes += item.staged.write.image_bytes;
    file_bytes += item.staged.write.file_bytes;
  }
  flushed(flush.reason, flush.started, flush.commit_finished, duration, entries, image_bytes,
          file_bytes, flush.durable);
}

void SyncThread::handle_failure(const Status& error) {
  dead_ = apply_failure_policy(failure_policy_, "sync", error, waiters_);
}

}  // namespace commitlog
