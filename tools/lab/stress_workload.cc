// SPDX-License-Identifier: Apache-2.0
#include "tools/lab/stress_workload.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <string_view>

#include <fmt/core.h>

namespace commitlog::tools::stress {
namespace {

constexpr size_t kMaxProblems = 10;

}  // namespace

void note(std::vector<std::string>& problems, std::string line) {
  if (problems.size() < kMaxProblems) problems.push_back(std::move(line));
}

bool read_field(std::string_view& text, std::string_view prefix, char sep, uint64_t& value) {
  if (!text.starts_with(prefix)) return false;
  text.remove_prefix(prefix.size());
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end == text.data() || end == text.data() + text.size() || *end != sep) return false;
  text.remove_prefix(static_cast<size_t>(end - text.data()) + 1);
  return true;
}

uint32_t table_of(uint64_t p) { return static_cast<uint32_t>(p % kTables); }

void make_payload(uint64_t p, uint64_t s, uint64_t max_size, std::string& out) {
  out.clear();
  fmt::format_to(std::back_inserter(out), "p={} s={} ", p, s);
  // Unsigned arithmetic wraps identically in every implementation of the formula.
  const uint64_t length = (p * 7919 + s * 104729) % max_size;
  const uint64_t base = p * 31 + s * 17;
  const size_t prefix = out.size();
  out.resize(prefix + length);
  for (uint64_t i = 0; i < length; ++i) out[prefix + i] = static_cast<char>('a' + (base + i) % 26);
}

uint64_t LogScan::producers() const {
  return static_cast<uint64_t>(std::count_if(next.begin(), next.end(), [](uint64_t n) { return n > 0; }));
}

const ReplayedEntry* LogScan::find(uint64_t p, uint64_t s) const {
  if (p >= entries.size()) return nullptr;
  const auto& list = entries[p];
  auto it = std::lower_bound(list.begin(), list.end(), s, [](const ReplayedEntry& e, uint64_t v) { return e.s < v; });
  return it != list.end() && it->s == s ? &*it : nullptr;
}

LogScan scan_log(const std::string& dir, uint64_t max_size, std::optional<Position> discarded,
                 std::shared_ptr<const KeyProvider> keys) {
  LogScan scan;
  std::error_code ec;
  if (!std::filesystem::exists(dir, ec)) return scan;
  std::string expected;
  auto handler = [&](const ReplayedMutation& m) {
    scan.newest_us = std::max(scan.newest_us, m.time_us);
    const std::string_view payload(reinterpret_cast<const char*>(m.payload.data()), m.payload.size());
    std::string_view rest = payload;
    uint64_t p = 0, s = 0;
    if (!read_field(rest, "p=", ' ', p) || !read_field(rest, "s=", ' ', s) || p >= kMaxProducers) {
      ++scan.mismatches;
      note(scan.problems, fmt::format("{}: payload does not start with \"p=<P> s=<S> \": \"{}\"",
                                      m.position.to_string(), payload.substr(0, 40)));
      return Status{};
    }
    make_payload(p, s, max_size, expected);
    if (payload != expected || m.table != table_of(p)) {
      ++scan.mismatches;
      note(scan.problems,
           fmt::format("{}: producer {} s {}: {} (table {}, {} bytes; expected table {}, {} bytes)",
                       m.position.to_string(), p, s, m.table != table_of(p) ? "wrong table" : "wrong payload",
                       m.table, payload.size(), table_of(p), expected.size()));
      return Status{};
    }
    if (p >= scan.next.size()) {
      scan.next.resize(p + 1, 0);
      scan.entries.resize(p + 1);
    }
    uint64_t& next = scan.next[p];
    auto& entries = scan.entries[p];
    // Where discarded segments may have gone: before the producer's first
    // mutation here, and after one at or below the discard point.
    const bool may_skip = discarded && (entries.empty() || entries.back().position <= *discarded);
    if (s < next) {
      ++scan.duplicates;
      note(scan.problems, fmt::format("{}: producer {} s {} again after s {}", m.position.to_string(), p, s,
                                      next - 1));
    } else {
      if (s > next && !may_skip) {
        ++scan.gaps;
        note(scan.problems, fmt::format("{}: producer {} s {} follows s {}: s {}..{} missing",
                                        m.position.to_string(), p, s, static_cast<int64_t>(next) - 1,
                                        next, s - 1));
      }
      next = s + 1;
    }
    entries.push_back({s, m.position});
    return Status{};
  };
  ReplayOptions options;
  options.mode = RecoveryMode::kTolerateTornTail;
  options.keys = std::move(keys);
  scan.replay = replay_directory(dir, options, handler);
  // In log order a clean producer's S values rise; a duplicate already failed.
  for (auto& entries : scan.entries) {
    std::stable_sort(entries.begin(), entries.end(),
                     [](const ReplayedEntry& a, const ReplayedEntry& b) { return a.s < b.s; });
  }
  return scan;
}

}  // namespace commitlog::tools::stress
