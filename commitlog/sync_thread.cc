#include "commitlog/sync_thread.h"

#include "commitlog/failure_policy.h"


namespace commitlog {

SyncThread::SyncThread(SegmentChain& chain, DurableWaiters& waiters, SyncPolicy& policy,
                       CommitFailurePolicy failure_policy)
    : chain_(chain), waiters_(waiters), policy_(policy), failure_policy_(failure_policy) {
  const TimePoint now = SteadyClock::now();
  last_flush_started_ = last_flush_finished_ = last_seal_ = now;
  waiters_.advance(0, now);
  thread_ = std::thread([this] { run(); });
}

SyncThread::~SyncThread() { stop(); }

// Producers set their flag first and read sleeping_ second; the thread sets
// sleeping_ first and reads the flags second (all seq_cst), so either the
// producer sees the thread asleep and wakes it, or the thread sees the flag.
void SyncThread::wake() {
  if (sleeping_.load()) {
    std::lock_guard lock(mu_);
    cv_.notify_one();
  }
}

void SyncThread::request_sync() {
  if (!sync_requested_.exchange(true)) wake();
}

void SyncThread::notify_waiter() {
  poked_.store(true);
  wake();
}

void SyncThread::notify_switch() {
  switch_pending_.store(true);
  wake();
}

void SyncThread::request_explicit_flush() {
  explicit_requested_.store(true);
  wake();
}

void SyncThread::stop() {
  {
    std::lock_guard lock(mu_);
    if (stopped_) return;
    stopped_ = true;
    stopping_ = true;
  }
  cv_.notify_one();
  thread_.join();
}

SyncState SyncThread::snapshot(TimePoint now) const {
  SyncState s;
  s.now = now;
  s.last_flush_started = last_flush_started_;
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
  std::unique_lock lock(mu_);
  while (true) {
    const bool stopping = stopping_;
    lock.unlock();
    const TimePoint now = SteadyClock::now();
    SyncPlan plan;
    if (stopping) {
      plan = {SyncPlan::Kind::kFlush, now, SyncReason::kShutdown};
    } else if (switch_pending_.exchange(false)) {
      plan = {SyncPlan::Kind::kFlush, now, SyncReason::kSegmentSwitch};
    } else if (explicit_requested_.exchange(false)) {
      plan = {SyncPlan::Kind::kFlush, now, SyncReason::kExplicit};
    } else if (!dead_) {
      plan = policy_.plan(snapshot(now));
    }
    if (plan.kind != SyncPlan::Kind::kIdle && plan.at <= now && !dead_) execute(plan);
    lock.lock();
    if (stopping) return;
    if (plan.kind != SyncPlan::Kind::kIdle && plan.at <= now) continue;
    // Checked under mu_: a producer that set its flag after this check sees
    // sleeping_ and notifies under mu_, which it can only take once this
    // thread is inside wait(). So no wake-up is lost.
    sleeping_.store(true);
    const bool poked = poked_.exchange(false) || sync_requested_.load() || switch_pending_.load() ||
                       explicit_requested_.load();
    if (!poked && !stopping_) {
      if (plan.kind == SyncPlan::Kind::kIdle || dead_) {
        cv_.wait(lock);
      } else {
        cv_.wait_until(lock, plan.at);
      }
    }
    sleeping_.store(false);
  }
}

void SyncThread::execute(SyncPlan plan) {
  const std::vector<MappedSegment*> segments = chain_.unfinished();
  // A closed segment is always flushed at once, so nothing sealed in a later
  // segment can become durable before it (Cassandra's switch sync).
  bool flush = plan.kind == SyncPlan::Kind::kFlush;
  for (MappedSegment* segment : segments) flush = flush || segment->closed();
  if (!flush) {
    for (MappedSegment* segment : segments) segment->seal();
    last_seal_ = SteadyClock::now();
    counters_.seals.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  // Cleared before sealing: a producer that asks from here on rides the next flush.
  sync_requested_.store(false);
  const TimePoint started = SteadyClock::now();
  uint64_t durable = 0;
  uint64_t entries = 0;
  for (MappedSegment* segment : segments) {
    segment->seal();
    auto tail = segment->flush();
    if (!tail.ok()) {
      // A failed flush counts as one for the policy's timing: a disk that
      // keeps failing (commit_failure_policy ignore) is retried once per
      // window or period, not in a busy loop.
      last_flush_started_ = started;
      last_flush_finished_ = SteadyClock::now();
      handle_failure(tail.status());
      return;
    }
    durable = DurableWaiters::pack(chain_.ordinal(*segment), *tail);
    entries += segment->take_sealed_entries();
  }
  const TimePoint finished = SteadyClock::now();
  last_seal_ = last_flush_finished_ = finished;
  last_flush_started_ = started;
  last_flush_duration_ = finished - started;
  chain_.retire_finished();
  // Counted before the waiters wake, so a woken producer sees its flush counted.
  counters_.flushes.fetch_add(1, std::memory_order_relaxed);
  counters_.flushed_entries.fetch_add(entries, std::memory_order_relaxed);
  counters_.flush_nanos.fetch_add(static_cast<uint64_t>(last_flush_duration_.count()),
                                  std::memory_order_relaxed);
  counters_.by_reason[static_cast<size_t>(plan.reason) % 8].fetch_add(1, std::memory_order_relaxed);
  counters_.group_sizes[SyncCounters::group_size_bucket(entries)].fetch_add(1, std::memory_order_relaxed);
  const auto flush_us = std::chrono::duration_cast<std::chrono::microseconds>(last_flush_duration_).count();
  counters_.flush_latency_us[SyncCounters::group_size_bucket(static_cast<uint64_t>(flush_us))].fetch_add(
      1, std::memory_order_relaxed);
  policy_.on_flush(last_flush_duration_, entries);
  waiters_.advance(durable, started);
}

void SyncThread::handle_failure(const Status& error) {
  dead_ = apply_failure_policy(failure_policy_, "sync", error, waiters_);
}

}  // namespace commitlog
