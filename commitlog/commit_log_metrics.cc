// SPDX-License-Identifier: Apache-2.0
#include "commitlog/commit_log_impl.h"

namespace commitlog {
namespace {

Log2Histogram histogram(const std::atomic<uint64_t>* buckets, size_t n, uint64_t sum) {
  Log2Histogram h;
  for (size_t b = 0; b < n; ++b) h.counts.push_back(buckets[b].load(std::memory_order_relaxed));
  h.sum = sum;
  return h;
}

}  // namespace

MetricsSnapshot CommitLog::metrics() const {
  const Impl& s = *impl_;
  const SyncCounters& c = s.sync_thread->counters();
  const LifecycleCounters l = s.lifecycle->counters();
  const ThrottleCounters t = s.lifecycle->throttle_counters();
  MetricsSnapshot m;
  m.disk_access_mode_setting = access_mode_name(s.options.disk_access_mode);
  m.disk_access_mode = access_mode_name(s.access_mode.mode);
  m.disk_access_mode_reason = s.access_mode.reason;
  m.failed = s.waiters.failed();
  if (m.failed) m.failure = s.waiters.error().to_string();
  m.sync_failures = c.sync_failures.load();
  m.mutations_completed = c.flushed_entries.load();
  m.producers_waiting = s.waiters.waiting();
  m.producers_waiting_for_space = t.waiting;
  m.total_log_bytes = l.total_bytes;
  m.segments = l.segments;
  m.segment_waits = s.segment_waits.load();
  m.segment_wait_nanos = s.segment_wait_nanos.load();
  m.seal_waits = c.seal_waits.load();
  m.seal_wait_nanos = c.seal_wait_nanos.load();
  m.producer_flushes = c.led_flushes.load();
  const SpinCounters& spins = s.waiters.spin_counters();
  m.spins = spins.spins.load();
  m.spins_missed = spins.missed.load();
  m.spin_nanos = spins.nanos.load();
  m.commit_waits = s.commit_waits.load();
  m.commit_wait_nanos = s.commit_wait_nanos.load();
  m.sync_latency_us = histogram(c.flush_latency_us, SyncCounters::kGroupSizeBuckets, c.flush_nanos.load() / 1000);
  m.mutations_per_sync = histogram(c.group_sizes, SyncCounters::kGroupSizeBuckets, c.flushed_entries.load());
  for (size_t r = 0; r < m.syncs_by_reason.size(); ++r) m.syncs_by_reason[r] = c.by_reason[r].load();
  m.oversized_mutations = s.oversized.load();
  m.direct_writes = s.direct_writes.load();
  m.throttled_appends = t.delayed;
  m.throttle_nanos = t.delay_nanos;
  m.space_waits = t.waits;
  m.space_wait_nanos = t.wait_nanos;
  m.space_timeouts = t.timeouts;
  m.segments_deleted = l.deleted;
  m.segments_recycled = l.recycled;
  m.spare_segments = l.spares;
  m.segments_archived = l.archived;
  m.archive_failures = l.archive_failures;
  m.delete_failures = l.delete_failures;
  m.flush_requests = l.flush_requests;
  if (s.cdc) {
    const CdcCounters cdc = s.cdc->counters();
    m.cdc_raw_bytes = cdc.raw_bytes;
    m.cdc_segments_linked = cdc.segments_linked;
    m.cdc_segments_deleted = cdc.segments_deleted;
    m.cdc_appends_refused = cdc.appends_refused;
    m.cdc_failures = cdc.failures;
  }
  return m;
}

}  // namespace commitlog
