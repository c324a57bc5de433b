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
  Json j = {
      {"disk_access_mode_setting", m.disk_access_mode_setting},
      {"disk_access_mode", m.disk_access_mode},
      {"disk_access_mode_reason", m.disk_access_mode_reason},
      {"failed", m.failed},
      {"failure", m.failure},
  };
  for (const MetricField& f : metric_fields()) j[f.name] = m.*f.value;
  j["sync_latency_us"] = histogram_json(m.sync_latency_us);
  j["mutations_per_sync"] = histogram_json(m.mutations_per_sync);
  Json by_reason = Json::object();
  for (size_t r = 0; r < kSyncReasons; ++r) by_reason[reason_name(r)] = m.syncs_by_reason[r];
  j["syncs_by_reason"] = by_reason;
  return j.dump(2);
}

std::string to_prometheus(const MetricsSnapshot& m) {
  Exposition e;
  e.family("disk_access_mode_info", "gauge", "1: segments are written in this mode, set as `setting`.");
  e.sample("disk_access_mode_info", 1,
           fmt::format("mode=\"{}\",setting=\"{}\"", m.disk_access_mode, m.disk_access_mode_setting));
  e.family("failed", "gauge", "1 once the log has failed (every append fails), with the error; else 0.");
  e.sample("failed", m.failed ? 1 : 0, m.failed ? fmt::format("error=\"{}\"", label_value(m.failure)) : "");
  std::string_view family;
  for (const MetricField& f : metric_fields()) {
    if (f.prometheus != family) e.family(f.prometheus, f.type, f.help);
    family = f.prometheus;
    if (f.nanos) {
      e.sample(f.prometheus, seconds(m.*f.value), f.label);
    } else {
      e.sample(f.prometheus, m.*f.value, f.label);
    }
  }
  e.histogram("sync_latency_microseconds", "Duration of each flush (msync/fdatasync round).", m.sync_latency_us);
  e.histogram("mutations_per_sync", "Mutations each flush made durable.", m.mutations_per_sync);
  e.family("syncs_total", "counter", "Flushes, by what triggered them.");
  for (size_t r = 0; r < kSyncReasons; ++r) {
    e.sample("syncs_total", m.syncs_by_reason[r], fmt::format("reason=\"{}\"", reason_name(r)));
  }
  return e.take();
}

}  // namespace commitlog
