// SPDX-License-Identifier: Apache-2.0
// Public API. A snapshot of the log's metrics (CommitLog::metrics()) and two renderings of
// it: JSON and the Prometheus text format.
//
// Cassandra's CommitLog metrics map as: CompletedTasks -> mutations_completed,
// PendingTasks -> producers_waiting, TotalCommitLogSize -> total_log_bytes,
// WaitingOnSegmentAllocation -> segment_wait*, WaitingOnCommit ->
// commit_wait*, WaitingOnFlush -> sync_latency_us, OverSizedMutations ->
// oversized_mutations. The rest is this log's own.
//
// Counters count from open(). Histograms have log-2 buckets: bucket 0 holds
// the value 0, bucket b >= 1 the values in [2^(b-1), 2^b), the last bucket
// everything from its lower bound up.
#pragma once

// One clear message instead of a page of errors from C++20 library features.
#if __cplusplus < 202002L
#error "commitlog needs C++20: compile with -std=c++20 or later"
#else

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "commitlog/export.h"
#include "commitlog/sync_policy.h"

namespace commitlog {

struct COMMITLOG_EXPORT Log2Histogram {
  std::vector<uint64_t> counts;  // per bucket
  uint64_t sum = 0;              // of the values recorded
  uint64_t count() const;
  // The largest value bucket b holds: its Prometheus `le`. The last bucket has none (+Inf).
  static uint64_t upper_bound(size_t b) { return b == 0 ? 0 : (uint64_t{1} << b) - 1; }
};

struct COMMITLOG_EXPORT MetricsSnapshot {
  // commitlog_disk_access_mode as set (e.g. "auto"), the mode segments are
  // written in ("mmap", "standard" or "direct") and, for legacy and auto,
  // why ("as O_DIRECT works in data/commitlog").
  std::string disk_access_mode_setting;
  std::string disk_access_mode;
  std::string disk_access_mode_reason;
  // Whether the log has failed (a sync failed under commit_failure_policy
  // stop, so every append fails) and the error that failed it.
  bool failed = false;
  std::string failure;
  uint64_t sync_failures = 0;                // flushes that failed, whatever the policy did
  uint64_t mutations_completed = 0;          // mutations made durable
  uint64_t producers_waiting = 0;            // for durability, now
  uint64_t producers_waiting_for_space = 0;  // at the hard limit, now
  uint64_t total_log_bytes = 0;              // SegmentLifecycle::total_bytes()
  uint64_t segments = 0;                     // segment files, the active one included
  uint64_t segment_waits = 0;                // producers that had to switch segments
  uint64_t segment_wait_nanos = 0;           // ... and the time that took them
  uint64_t commit_waits = 0;                 // producers that waited for durability
  uint64_t commit_wait_nanos = 0;            // ... and how long
  uint64_t seal_waits = 0;                   // seals that waited for a producer still
                                             // writing its entry (preempted mid-copy)
  uint64_t seal_wait_nanos = 0;              // ... and how long
  uint64_t producer_flushes = 0;             // flushes a plain-thread producer ran on its
                                             // own thread, finding none in flight
  uint64_t spins = 0;                        // waits that spun before sleeping
                                             // (Options::spin_wait)
  uint64_t spins_missed = 0;                 // ... and slept after all
  uint64_t spin_nanos = 0;                   // CPU time spent spinning
  Log2Histogram sync_latency_us;             // per flush (msync/fdatasync round)
  Log2Histogram mutations_per_sync;          // mutations each flush made durable
  std::array<uint64_t, kSyncReasons> syncs_by_reason{};  // flushes, by SyncReason
  uint64_t oversized_mutations = 0;          // refused for max_mutation_size
  uint64_t direct_writes = 0;                // payloads that bypassed the segment image
  uint64_t throttled_appends = 0;            // delayed near the hard limit
  uint64_t throttle_nanos = 0;
  uint64_t space_waits = 0;                  // waited at the hard limit
  uint64_t space_wait_nanos = 0;
  uint64_t space_timeouts = 0;               // ... until their deadline
  uint64_t segments_deleted = 0;
  uint64_t segments_recycled = 0;            // kept as spare files instead, to be written over
  uint64_t spare_segments = 0;               // spare files now
  uint64_t segments_archived = 0;
  uint64_t archive_failures = 0;             // segments kept because archiving failed
  uint64_t delete_failures = 0;              // segments kept because removing failed
  uint64_t flush_requests = 0;               // calls of Options::on_flush_request
  // Change data capture (cdc_enabled; commitlog/cdc_options.h).
  uint64_t cdc_raw_bytes = 0;                // cdc_raw_directory's size, last measured
  uint64_t cdc_segments_linked = 0;
  uint64_t cdc_segments_deleted = 0;         // to stay within cdc_total_space
  uint64_t cdc_appends_refused = 0;          // over cdc_total_space (cdc_block_writes)
  uint64_t cdc_failures = 0;                 // links, idx writes, deletions that failed
};

// One number of a snapshot as every rendering names it. The table of them,
// metric_fields(), is the one list the JSON, the Prometheus text and a
// server's own report (commitlog-kv's INFO) are drawn from.
struct COMMITLOG_EXPORT MetricField {
  const char* name;        // JSON key: "seal_waits"
  const char* prometheus;  // the family, after "commitlog_": "seal_waits_total"
  const char* type;        // "counter" or "gauge"
  const char* help;        // one line
  uint64_t MetricsSnapshot::*value;
  const char* label = "";  // this sample's label in a family of several ("for=\"commit\"")
  bool nanos = false;      // a time in ns, which Prometheus shows in seconds
};

// Every plain number of a snapshot, in the order they are rendered (after
// the access mode and the failure, before the histograms and syncs_by_reason).
COMMITLOG_EXPORT std::span<const MetricField> metric_fields();

// One JSON object; times in nanoseconds, histograms as
// {"buckets": [{"le": 0, "count": n}, ..., {"le": "+Inf", "count": n}], "sum": s, "count": c}
// with per-bucket (not cumulative) counts.
COMMITLOG_EXPORT std::string to_json(const MetricsSnapshot& metrics);
// Prometheus text exposition format, every name prefixed commitlog_; times in
// seconds, except the sync latency histogram, in microseconds.
COMMITLOG_EXPORT std::string to_prometheus(const MetricsSnapshot& metrics);

}  // namespace commitlog

#endif  // C++20
