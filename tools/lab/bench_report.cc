// SPDX-License-Identifier: Apache-2.0
// The table, CSV and JSON outputs of `commitlog bench`, from one column list.
#include "tools/lab/bench_report.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <functional>

namespace commitlog::tools {
namespace {

using Points = std::vector<PointResult>;

// A value: text, a number, or absent (an empty CSV field, JSON null, "-").
struct Cell {
  enum Kind { kNone, kText, kNumber, kInteger } kind = kNone;
  std::string text;
  double number = 0;
};
Cell text(std::string s) { return {Cell::kText, std::move(s), 0}; }
Cell number(double v) { return {Cell::kNumber, {}, v}; }
Cell integer(uint64_t v) { return {Cell::kInteger, std::to_string(v), 0}; }
Cell none() { return {}; }

double us(uint64_t nanos) { return static_cast<double>(nanos) / 1e3; }
double mib(uint64_t bytes) { return static_cast<double>(bytes) / (1u << 20); }

Cell ratio_to(const Points& all, const PointResult& p, const char* engine) {
  const PointResult* ref = find_reference(all, p, engine);
  if (ref == nullptr || ref->ops_per_second() <= 0) return none();
  return number(p.ops_per_second() / ref->ops_per_second());
}

struct Column {
  const char* key;     // CSV/JSON name; null: table only
  const char* header;  // table header; null: CSV/JSON only
  std::function<Cell(const Points&, const PointResult&)> value;
};

const std::vector<Column>& columns() {
  using P = const PointResult&;
  using A = const Points&;
  static const std::vector<Column> kColumns = {
      {"engine", nullptr, [](A, P p) { return text(p.spec.engine.engine); }},
      {"policy", nullptr, [](A, P p) { return text(p.spec.engine.policy_label()); }},
      {"large_path", nullptr, [](A, P p) { return text(p.spec.engine.large_path); }},
      {"compression", nullptr, [](A, P p) { return text(p.spec.engine.compression); }},
      {"encryption", nullptr, [](A, P p) { return text(p.spec.engine.encryption); }},
      {"access_mode", nullptr, [](A, P p) { return text(p.spec.engine.access_mode); }},
      {"segments", nullptr, [](A, P p) { return text(p.spec.engine.segments); }},
      {nullptr, "engine",
       [](A, P p) { return text(p.spec.engine.label() + (p.durable ? "" : " (not durable)")); }},
      {"threads", nullptr, [](A, P p) { return integer(static_cast<uint64_t>(p.spec.threads)); }},
      {"fibers", nullptr, [](A, P p) { return integer(static_cast<uint64_t>(p.spec.fibers)); }},
      {"producers", nullptr,
       [](A, P p) { return integer(static_cast<uint64_t>(p.spec.producers())); }},
      {nullptr, "threads x fibers",
       [](A, P p) {
         return text(p.spec.fibers == 1 ? fmt::format("{}", p.spec.threads)
                                        : fmt::format("{} x {}", p.spec.threads, p.spec.fibers));
       }},
      {"size_bytes", nullptr, [](A, P p) { return integer(p.spec.size); }},
      {nullptr, "size", [](A, P p) { return text(format_bytes(p.spec.size)); }},
      {"payload", "payload", [](A, P p) { return text(payload_kind_name(p.spec.payload)); }},
      {"seconds", nullptr, [](A, P p) { return number(p.seconds); }},
      {"ops", nullptr, [](A, P p) { return integer(p.ops); }},
      {"ops_per_s", "ops/s", [](A, P p) { return number(p.ops_per_second()); }},
      {"mb_per_s", "MB/s", [](A, P p) { return number(p.mb_per_second()); }},
      {"p50_us", "p50 µs", [](A, P p) { return number(us(p.latency.quantile(0.50))); }},
      {"p95_us", "p95 µs", [](A, P p) { return number(us(p.latency.quantile(0.95))); }},
      {"p99_us", "p99 µs", [](A, P p) { return number(us(p.latency.quantile(0.99))); }},
      {"p999_us", "p99.9 µs", [](A, P p) { return number(us(p.latency.quantile(0.999))); }},
      {"mean_us", nullptr, [](A, P p) { return number(p.latency.mean() / 1e3); }},
      {"max_us", nullptr, [](A, P p) { return number(us(p.latency.max())); }},
      {"user_us_per_op", "user µs/op", [](A, P p) { return number(p.per_op(p.usage.user_us)); }},
      {"sys_us_per_op", "sys µs/op", [](A, P p) { return number(p.per_op(p.usage.sys_us)); }},
      {"cpu_us_per_op", "CPU µs/op",
       [](A, P p) { return number(p.per_op(p.usage.user_us + p.usage.sys_us)); }},
      {"ctxsw_per_op", "ctxsw/op",
       [](A, P p) { return number(p.per_op(static_cast<double>(p.usage.context_switches()))); }},
      {"fsyncs", nullptr, [](A, P p) { return integer(p.syncs); }},
      {"fsyncs_per_op", "fsyncs/op",
       [](A, P p) { return number(p.per_op(static_cast<double>(p.syncs))); }},
      {"ops_per_fsync", "ops/fsync",
       [](A, P p) {
         return p.syncs == 0 ? none()
                             : number(static_cast<double>(p.ops) / static_cast<double>(p.syncs));
       }},
      {"device_kib_per_fsync", "dev KiB/fsync",
       [](A, P p) {
         return p.syncs == 0 ? none()
                             : number(static_cast<double>(p.usage.write_bytes) / 1024.0 /
                                      static_cast<double>(p.syncs));
       }},
      {"compression_ratio", "ratio",
       [](A, P p) { return p.compression_ratio() > 0 ? number(p.compression_ratio()) : none(); }},
      {"rss_mib", "RSS MiB", [](A, P p) { return number(mib(p.rss_bytes)); }},
      {"rss_delta_mib", nullptr,
       [](A, P p) { return number(mib(p.rss_bytes) - mib(p.rss_before)); }},
      {"x_raw", "x raw", [](A all, P p) { return ratio_to(all, p, "raw"); }},
      {"x_raw_overwrite", "x raw-overwrite",
       [](A all, P p) { return ratio_to(all, p, "raw-overwrite"); }},
      {"x_raw_direct", "x raw-direct", [](A all, P p) { return ratio_to(all, p, "raw-direct"); }},
      {"x_rocksdb", "x rocksdb", [](A all, P p) { return ratio_to(all, p, "rocksdb"); }},
      {"durable", nullptr, [](A, P p) { return integer(p.durable ? 1 : 0); }},
      {"errors", nullptr, [](A, P p) { return integer(p.errors); }},
  };
  return kColumns;
}

// `digits` significant digits, never an exponent: 0.0123, 5.20, 1234.
std::string format_number(double v, int digits) {
  if (v == 0 || !std::isfinite(v)) return v == 0 ? "0" : "null";
  const int magnitude = static_cast<int>(std::floor(std::log10(std::fabs(v))));
  const int decimals = std::clamp(digits - 1 - magnitude, 0, 6);
  return fmt::format("{:.{}f}", v, decimals);
}

std::string cell_text(const Cell& c, int digits, const char* absent) {
  switch (c.kind) {
    case Cell::kNone: return absent;
    case Cell::kText:
    case Cell::kInteger: return c.text;
    case Cell::kNumber: return format_number(c.number, digits);
  }
  return absent;
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') out += '\\';
    out += ch;
  }
  return out + "\"";
}

std::string format_table(const Points& all) {
  std::string header = "|", rule = "|";
  for (const Column& c : columns()) {
    if (c.header == nullptr) continue;
    header += fmt::format(" {} |", c.header);
    rule += c.key == nullptr || std::string(c.key) == "engine" ? "---|" : "---:|";
  }
  std::string out = header + "\n" + rule + "\n";
  for (const PointResult& p : all) {
    out += "|";
    for (const Column& c : columns()) {
      if (c.header != nullptr) out += fmt::format(" {} |", cell_text(c.value(all, p), 3, "-"));
    }
    out += "\n";
  }
  std::string notes;
  for (const PointResult& p : all) {
    if (p.errors > 0) {
      notes += fmt::format("- {} at {} x {}: {} failed appends, first: {}\n", p.spec.engine.label(),
                           p.spec.threads, p.spec.fibers, p.errors, p.first_error);
    }
  }
  if (!notes.empty()) out += "\nErrors:\n" + notes;
  return out;
}

std::string format_csv(const Points& all) {
  std::string out;
  for (const Column& c : columns()) {
    if (c.key != nullptr) out += std::string(out.empty() ? "" : ",") + c.key;
  }
  out += "\n";
  for (const PointResult& p : all) {
    std::string line;
    for (const Column& c : columns()) {
      if (c.key == nullptr) continue;
      if (!line.empty()) line += ",";
      line += cell_text(c.value(all, p), 5, "");
    }
    out += line + "\n";
  }
  return out;
}

std::string format_json(const Points& all) {
  std::string out = "{\n  \"points\": [";
  for (size_t i = 0; i < all.size(); ++i) {
    out += i == 0 ? "\n    {" : ",\n    {";
    bool first = true;
    for (const Column& c : columns()) {
      if (c.key == nullptr) continue;
      const Cell cell = c.value(all, all[i]);
      const std::string v =
          cell.kind == Cell::kText ? json_string(cell.text) : cell_text(cell, 5, "null");
      out += fmt::format("{}\"{}\": {}", first ? "" : ", ", c.key, v);
      first = false;
    }
    out += "}";
  }
  return out + "\n  ]\n}\n";
}

}  // namespace

const PointResult* find_reference(const Points& results, const PointResult& point,
                                  const std::string& engine) {
  for (const PointResult& r : results) {
    if (r.spec.engine.engine == engine && r.spec.same_shape(point.spec)) {
      return &r;
    }
  }
  return nullptr;
}

std::string format_bytes(uint64_t bytes) {
  if (bytes >= (1u << 20) && bytes % (1u << 20) == 0) return fmt::format("{} MiB", bytes >> 20);
  if (bytes >= (1u << 10) && bytes % (1u << 10) == 0) return fmt::format("{} KiB", bytes >> 10);
  return fmt::format("{} B", bytes);
}

std::string format_results(const Points& results, BenchFormat format) {
  switch (format) {
    case BenchFormat::kTable: return format_table(results);
    case BenchFormat::kCsv: return format_csv(results);
    case BenchFormat::kJson: return format_json(results);
  }
  return {};
}

}  // namespace commitlog::tools
