// SPDX-License-Identifier: Apache-2.0
// Adding a number to the metrics is adding a MetricsSnapshot member, filling
// it in CommitLog::metrics() and one row here: JSON, Prometheus and INFO
// follow.
#include "commitlog/metrics.h"

namespace commitlog {
namespace {

using M = MetricsSnapshot;

constexpr MetricField kFields[] = {
    {"sync_failures", "sync_failures_total", "counter", "Flushes that failed, whatever commit_failure_policy did.",
     &M::sync_failures},
    {"mutations_completed", "mutations_completed_total", "counter", "Mutations made durable.",
     &M::mutations_completed},
    {"producers_waiting", "producers_waiting", "gauge",
     "Producers waiting now, for durability (commit) or for space.", &M::producers_waiting, "for=\"commit\""},
    {"producers_waiting_for_space", "producers_waiting", "gauge",
     "Producers waiting now, for durability (commit) or for space.", &M::producers_waiting_for_space,
     "for=\"space\""},
    {"total_log_bytes", "total_log_bytes", "gauge", "Bytes of the log's segment files.", &M::total_log_bytes},
    {"segments", "segments", "gauge", "Segment files of the log.", &M::segments},
    {"segment_waits", "segment_waits_total", "counter", "Producers that switched to a new segment.",
     &M::segment_waits},
    {"segment_wait_nanos", "segment_wait_seconds_total", "counter", "Time producers spent switching segments.",
     &M::segment_wait_nanos, "", true},
    {"commit_waits", "commit_waits_total", "counter", "Producers that waited for durability.", &M::commit_waits},
    {"commit_wait_nanos", "commit_wait_seconds_total", "counter", "Time producers spent waiting for durability.",
     &M::commit_wait_nanos, "", true},
    {"seal_waits", "seal_waits_total", "counter",
     "Seals that waited for a producer still writing its entry (preempted mid-copy).", &M::seal_waits},
    {"seal_wait_nanos", "seal_wait_seconds_total", "counter", "Time seals spent waiting for such entries.",
     &M::seal_wait_nanos, "", true},
    {"producer_flushes", "producer_flushes_total", "counter",
     "Flushes a producer on a plain thread ran itself, finding none in flight.", &M::producer_flushes},
    {"spins", "spins_total", "counter",
     "Waits (a lone producer's, the sync thread's idle ones) that spun before sleeping.", &M::spins},
    {"spins_missed", "spins_missed_total", "counter", "Spins that ended in a sleep after all.", &M::spins_missed},
    {"spin_nanos", "spin_seconds_total", "counter", "CPU time spent spinning.", &M::spin_nanos, "", true},
    {"oversized_mutations", "oversized_mutations_total", "counter", "Mutations refused for max_mutation_size.",
     &M::oversized_mutations},
    {"direct_writes", "direct_writes_total", "counter",
     "Payloads at or over commitlog_ext_direct_write_threshold that bypassed the segment image.",
     &M::direct_writes},
    {"throttled_appends", "throttled_appends_total", "counter", "Appends delayed near the hard limit.",
     &M::throttled_appends},
    {"throttle_nanos", "throttle_seconds_total", "counter", "Time appends spent delayed near the hard limit.",
     &M::throttle_nanos, "", true},
    {"space_waits", "space_waits_total", "counter", "Appends that waited at the hard limit.", &M::space_waits},
    {"space_wait_nanos", "space_wait_seconds_total", "counter", "Time appends spent waiting at the hard limit.",
     &M::space_wait_nanos, "", true},
    {"space_timeouts", "space_timeouts_total", "counter", "Appends whose deadline passed at the hard limit.",
     &M::space_timeouts},
    {"segments_deleted", "segments_deleted_total", "counter", "Segments deleted after discard.",
     &M::segments_deleted},
    {"segments_recycled", "segments_recycled_total", "counter",
     "Segments kept after discard as spare files that later segments are written over.", &M::segments_recycled},
    {"spare_segments", "spare_segments", "gauge", "Spare segment files kept for reuse.", &M::spare_segments},
    {"segments_archived", "segments_archived_total", "counter", "Segments archive_command archived.",
     &M::segments_archived},
    {"archive_failures", "archive_failures_total", "counter", "Failed archive commands; their segments are kept.",
     &M::archive_failures},
    {"delete_failures", "delete_failures_total", "counter", "Failed segment removals; those segments are kept.",
     &M::delete_failures},
    {"flush_requests", "flush_requests_total", "counter", "Flush requests made over commitlog_total_space.",
     &M::flush_requests},
    {"cdc_raw_bytes", "cdc_raw_bytes", "gauge", "Bytes in cdc_raw_directory, last measured.", &M::cdc_raw_bytes},
    {"cdc_segments_linked", "cdc_segments_linked_total", "counter", "Segments linked into cdc_raw_directory.",
     &M::cdc_segments_linked},
    {"cdc_segments_deleted", "cdc_segments_deleted_total", "counter",
     "Segments deleted from cdc_raw_directory for cdc_total_space.", &M::cdc_segments_deleted},
    {"cdc_appends_refused", "cdc_appends_refused_total", "counter", "CDC appends refused over cdc_total_space.",
     &M::cdc_appends_refused},
    {"cdc_failures", "cdc_failures_total", "counter", "CDC links, index writes or deletions that failed.",
     &M::cdc_failures},
};

}  // namespace

std::span<const MetricField> metric_fields() { return kFields; }

}  // namespace commitlog
