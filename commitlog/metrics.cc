// SPDX-License-Identifier: Apache-2.0
#include "commitlog/metrics.h"

#include <numeric>
#include <string_view>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "commitlog/sync_policy.h"

namespace commitlog {
namespace {

using Json = nlohmann::ordered_json;

const char* reason_name(size_t reason) { return sync_reason_name(static_cast<SyncReason>(reason)); }

Json histogram_json(const Log2Histogram& h) {
  Json buckets = Json::array();
  for (size_t b = 0; b < h.counts.size(); ++b) {
    Json le = b + 1 < h.counts.size() ? Json(Log2Histogram::upper_bound(b)) : Json("+Inf");
    buckets.push_back({{"le", le}, {"count", h.counts[b]}});
  }
  return {{"buckets", buckets}, {"sum", h.sum}, {"count", h.count()}};
}

double seconds(uint64_t nanos) { return static_cast<double>(nanos) / 1e9; }

// A label value as the text format escapes it: backslash, quote, newline.
std::string label_value(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '\\' || c == '"') out += '\\';
    out += c == '\n' ? std::string("\\n") : std::string(1, c);
  }
  return out;
}

// Prometheus text format, one family at a time.
class Exposition {
 public:
  void family(std::string_view name, std::string_view type, std::string_view help) {
    out_ += fmt::format("# HELP commitlog_{} {}\n# TYPE commitlog_{} {}\n", name, help, name, type);
  }
  template <typename T>
  void sample(std::string_view name, T value, std::string_view labels = {}) {
    if (labels.empty()) {
      out_ += fmt::format("commitlog_{} {}\n", name, value);
    } else {
      out_ += fmt::format("commitlog_{}{{{}}} {}\n", name, labels, value);
    }
  }
  template <typename T>
  void single(std::string_view name, std::string_view type, std::string_view help, T value) {
    family(name, type, help);
    sample(name, value);
  }
  void histogram(std::string_view name, std::string_view help, const Log2Histogram& h) {
    family(name, "histogram", help);
    const std::string bucket = std::string(name) + "_bucket";
    uint64_t cumulative = 0;
    for (size_t b = 0; b < h.counts.size(); ++b) {
      cumulative += h.counts[b];
      const std::string le = b + 1 < h.counts.size() ? std::to_string(Log2Histogram::upper_bound(b)) : "+Inf";
      sample(bucket, cumulative, "le=\"" + le + "\"");
    }
    sample(std::string(name) + "_sum", h.sum);
    sample(std::string(name) + "_count", h.count());
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

}  // namespace

uint64_t Log2Histogram::count() const { return std::accumulate(counts.begin(), counts.end(), uint64_t{0}); }

std::string to_json(const MetricsSnapshot& m) {
  Json by_reason = Json::object();
  for (size_t r = 0; r < m.syncs_by_reason.size(); ++r) by_reason[reason_name(r)] = m.syncs_by_reason[r];
  const Json j = {
      {"disk_access_mode_setting", m.disk_access_mode_setting},
      {"disk_access_mode", m.disk_access_mode},
      {"disk_access_mode_reason", m.disk_access_mode_reason},
      {"failed", m.failed},
      {"failure", m.failure},
      {"sync_failures", m.sync_failures},
      {"mutations_completed", m.mutations_completed},
      {"producers_waiting", m.producers_waiting},
      {"producers_waiting_for_space", m.producers_waiting_for_space},
      {"total_log_bytes", m.total_log_bytes},
      {"segments", m.segments},
      {"segment_waits", m.segment_waits},
      {"segment_wait_nanos", m.segment_wait_nanos},
      {"commit_waits", m.commit_waits},
      {"commit_wait_nanos", m.commit_wait_nanos},
      {"seal_waits", m.seal_waits},
      {"seal_wait_nanos", m.seal_wait_nanos},
      {"producer_flushes", m.producer_flushes},
      {"spins", m.spins},
      {"spins_missed", m.spins_missed},
      {"spin_nanos", m.spin_nanos},
      {"sync_latency_us", histogram_json(m.sync_latency_us)},
      {"mutations_per_sync", histogram_json(m.mutations_per_sync)},
      {"syncs_by_reason", by_reason},
      {"oversized_mutations", m.oversized_mutations},
      {"direct_writes", m.direct_writes},
      {"throttled_appends", m.throttled_appends},
      {"throttle_nanos", m.throttle_nanos},
      {"space_waits", m.space_waits},
      {"space_wait_nanos", m.space_wait_nanos},
      {"space_timeouts", m.space_timeouts},
      {"segments_deleted", m.segments_deleted},
      {"segments_archived", m.segments_archived},
      {"archive_failures", m.archive_failures},
      {"delete_failures", m.delete_failures},
      {"flush_requests", m.flush_requests},
      {"cdc_raw_bytes", m.cdc_raw_bytes},
      {"cdc_segments_linked", m.cdc_segments_linked},
      {"cdc_segments_deleted", m.cdc_segments_deleted},
      {"cdc_appends_refused", m.cdc_appends_refused},
      {"cdc_failures", m.cdc_failures},
  };
  return j.dump(2);
}

std::string to_prometheus(const MetricsSnapshot& m) {
  Exposition e;
  e.family("disk_access_mode_info", "gauge", "1: segments are written in this mode, set as `setting`.");
  e.sample("disk_access_mode_info", 1,
           fmt::format("mode=\"{}\",setting=\"{}\"", m.disk_access_mode, m.disk_access_mode_setting));
  e.family("failed", "gauge", "1 once the log has failed (every append fails), with the error; else 0.");
  e.sample("failed", m.failed ? 1 : 0, m.failed ? fmt::format("error=\"{}\"", label_value(m.failure)) : "");
  e.single("sync_failures_total", "counter", "Flushes that failed, whatever commit_failure_policy did.",
           m.sync_failures);
  e.single("mutations_completed_total", "counter", "Mutations made durable.", m.mutations_completed);
  e.family("producers_waiting", "gauge", "Producers waiting now, for durability (commit) or for space.");
  e.sample("producers_waiting", m.producers_waiting, "for=\"commit\"");
  e.sample("producers_waiting", m.producers_waiting_for_space, "for=\"space\"");
  e.single("total_log_bytes", "gauge", "Bytes of the log's segment files.", m.total_log_bytes);
  e.single("segments", "gauge", "Segment files of the log.", m.segments);
  e.single("segment_waits_total", "counter", "Producers that switched to a new segment.", m.segment_waits);
  e.single("segment_wait_seconds_total", "counter", "Time producers spent switching segments.",
           seconds(m.segment_wait_nanos));
  e.single("commit_waits_total", "counter", "Producers that waited for durability.", m.commit_waits);
  e.single("commit_wait_seconds_total", "counter", "Time producers spent waiting for durability.",
           seconds(m.commit_wait_nanos));
  e.single("seal_waits_total", "counter",
           "Seals that waited for a producer still writing its entry (preempted mid-copy).",
           m.seal_waits);
  e.single("seal_wait_seconds_total", "counter", "Time seals spent waiting for such entries.",
           seconds(m.seal_wait_nanos));
  e.single("producer_flushes_total", "counter",
           "Flushes a producer on a plain thread ran itself, finding none in flight.",
           m.producer_flushes);
  e.single("spins_total", "counter",
           "Waits (a lone producer's, the sync thread's idle ones) that spun before sleeping.",
           m.spins);
  e.single("spins_missed_total", "counter", "Spins that ended in a sleep after all.",
           m.spins_missed);
  e.single("spin_seconds_total", "counter", "CPU time spent spinning.", seconds(m.spin_nanos));
  e.histogram("sync_latency_microseconds", "Duration of each flush (msync/fdatasync round).", m.sync_latency_us);
  e.histogram("mutations_per_sync", "Mutations each flush made durable.", m.mutations_per_sync);
  e.family("syncs_total", "counter", "Flushes, by what triggered them.");
  for (size_t r = 0; r < m.syncs_by_reason.size(); ++r) {
    e.sample("syncs_total", m.syncs_by_reason[r], fmt::format("reason=\"{}\"", reason_name(r)));
  }
  e.single("oversized_mutations_total", "counter", "Mutations refused for max_mutation_size.", m.oversized_mutations);
  e.single(
      "direct_writes_total", "counter",
      "Payloads at or over commitlog_ext_direct_write_threshold that bypassed the segment image.",
      m.direct_writes);
  e.single("throttled_appends_total", "counter", "Appends delayed near the hard limit.", m.throttled_appends);
  e.single("throttle_seconds_total", "counter", "Time appends spent delayed near the hard limit.",
           seconds(m.throttle_nanos));
  e.single("space_waits_total", "counter", "Appends that waited at the hard limit.", m.space_waits);
  e.single("space_wait_seconds_total", "counter", "Time appends spent waiting at the hard limit.",
           seconds(m.space_wait_nanos));
  e.single("space_timeouts_total", "counter", "Appends whose deadline passed at the hard limit.", m.space_timeouts);
  e.single("segments_deleted_total", "counter", "Segments deleted after discard.", m.segments_deleted);
  e.single("segments_archived_total", "counter", "Segments archive_command archived.", m.segments_archived);
  e.single("archive_failures_total", "counter", "Failed archive commands; their segments are kept.",
           m.archive_failures);
  e.single("delete_failures_total", "counter", "Failed segment removals; those segments are kept.",
           m.delete_failures);
  e.single("flush_requests_total", "counter", "Flush requests made over commitlog_total_space.", m.flush_requests);
  e.single("cdc_raw_bytes", "gauge", "Bytes in cdc_raw_directory, last measured.", m.cdc_raw_bytes);
  e.single("cdc_segments_linked_total", "counter", "Segments linked into cdc_raw_directory.", m.cdc_segments_linked);
  e.single("cdc_segments_deleted_total", "counter", "Segments deleted from cdc_raw_directory for cdc_total_space.",
           m.cdc_segments_deleted);
  e.single("cdc_appends_refused_total", "counter", "CDC appends refused over cdc_total_space.", m.cdc_appends_refused);
  e.single("cdc_failures_total", "counter", "CDC links, index writes or deletions that failed.", m.cdc_failures);
  return e.take();
}

}  // namespace commitlog
