// SPDX-License-Identifier: Apache-2.0
#include "tools/lab/stress_workload.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <string_view>

#include <fmt/core.h>

namespace commitlog::tools::stress {
namespace {

constexpr uint64_t kMaxProducers = uint64_t{1} << 20;  // more is a damaged payload or ack
constexpr size_t kMaxProblems = 10;

void note(std::vector<std::string>& problems, std::string line) {
  if (problems.size() < kMaxProblems) problems.push_back(std::move(line));
}

// Reads `prefix`, a decimal number and `sep` from the front of `text`.
bool read_field(std::string_view& text, std::string_view prefix, char sep, uint64_t& value) {
  if (!text.starts_with(prefix)) return false;
  text.remove_prefix(prefix.size());
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end == text.data() || end == text.data() + text.size() || *end != sep) return false;
  text.remove_prefix(static_cast<size_t>(end - text.data()) + 1);
  return true;
}

// A producer's acknowledged S values that the log is believed to hold, as
// closed intervals lo -> hi. Acks arrive in increasing order within a run, so
// this is almost always one interval; a kill between an append returning and
// its ack being written leaves a hole.
class AckedSet {
 public:
  bool empty() const { return intervals_.empty(); }
  uint64_t last() const { return intervals_.rbegin()->second; }

  uint64_t count_from(uint64_t x) const {
    uint64_t n = 0;
    for (auto it = intervals_.rbegin(); it != intervals_.rend() && it->second >= x; ++it) {
      n += it->second - std::max(it->first, x) + 1;
    }
    return n;
  }
  void erase_from(uint64_t x) {
    while (!intervals_.empty() && intervals_.rbegin()->second >= x) {
      auto it = std::prev(intervals_.end());
      if (it->first >= x) {
        intervals_.erase(it);
      } else {
        it->second = x - 1;
      }
    }
  }
  // REQUIRES: empty() or s > last().
  void add(uint64_t s) {
    if (!intervals_.empty() && intervals_.rbegin()->second + 1 == s) {
      intervals_.rbegin()->second = s;
    } else {
      intervals_.emplace(s, s);
    }
  }

 private:
  std::map<uint64_t, uint64_t> intervals_;
};

// Calls `line(text, number)` for each complete line of the file at `path`.
template <typename F>
Status for_each_line(const std::string& path, bool& torn_last_line, F&& line) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return {};
    return Status::from_errno(errno, path);
  }
  std::string pending;
  std::vector<char> buffer(1 << 20);
  uint64_t number = 0;
  Status status;
  while (status.ok()) {
    const ssize_t got = ::read(fd, buffer.data(), buffer.size());
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      status = Status::from_errno(errno, path);
      break;
    }
    if (got == 0) break;
    std::string_view chunk(buffer.data(), static_cast<size_t>(got));
    for (size_t nl; status.ok() && (nl = chunk.find('\n')) != std::string_view::npos;) {
      pending.append(chunk.substr(0, nl));
      chunk.remove_prefix(nl + 1);
      status = line(std::string_view(pending), ++number);
      pending.clear();
    }
    pending.append(chunk);
  }
  ::close(fd);
  torn_last_line = !pending.empty();
  return status;
}

}  // namespace

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

LogScan scan_log(const std::string& dir, uint64_t max_size, std::shared_ptr<const KeyProvider> keys) {
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
    if (p >= scan.next.size()) scan.next.resize(p + 1, 0);
    uint64_t& next = scan.next[p];
    if (s < next) {
      ++scan.duplicates;
      note(scan.problems, fmt::format("{}: producer {} s {} again after s {}", m.position.to_string(), p, s,
                                      next - 1));
    } else {
      if (s > next) {
        ++scan.gaps;
        note(scan.problems, fmt::format("{}: producer {} s {} follows s {}: s {}..{} missing",
                                        m.position.to_string(), p, s, static_cast<int64_t>(next) - 1,
                                        next, s - 1));
      }
      next = s + 1;
    }
    return Status{};
  };
  ReplayOptions options;
  options.mode = RecoveryMode::kTolerateTornTail;
  options.keys = std::move(keys);
  scan.replay = replay_directory(dir, options, handler);
  return scan;
}

// One run's acks with their rounds: which of them the log had kept by the
// run's last ack line (see stress_workload.h).
class RunRounds {
 public:
  void add(uint64_t p, uint64_t s, uint64_t rounds) {
    max_rounds_ = std::max(max_rounds_, rounds);
    if (p >= acks_.size()) acks_.resize(p + 1);
    auto& by_rounds = acks_[p];  // one producer's rounds never go down
    if (!by_rounds.empty() && by_rounds.back().first == rounds) {
      by_rounds.back().second = s;
    } else {
      by_rounds.emplace_back(rounds, s);
    }
  }
  // Ends the run: raises kept[P] + 1 to above each producer's last S kept.
  void end(std::vector<uint64_t>& kept_below) {
    for (uint64_t p = 0; p < acks_.size(); ++p) {
      for (const auto& [rounds, s] : acks_[p]) {
        if (rounds + 2 > max_rounds_) break;
        if (p >= kept_below.size()) kept_below.resize(p + 1, 0);
        kept_below[p] = std::max(kept_below[p], s + 1);
      }
    }
    *this = {};
  }

 private:
  uint64_t max_rounds_ = 0;
  std::vector<std::vector<std::pair<uint64_t, uint64_t>>> acks_;  // (rounds, last S) per producer
};

AckReport analyze_acks(const std::string& path, std::span<const uint64_t> next) {
  AckReport report;
  std::vector<AckedSet> acked;
  std::vector<uint64_t> kept_below;  // per producer: acks below this S were kept
  RunRounds run;
  // `lost` acks of producer `p` from S `from` on; those the log had kept count too.
  auto loss = [&](uint64_t p, uint64_t from, uint64_t lost) {
    ++report.loss_events;
    report.max_lost_per_event = std::max(report.max_lost_per_event, lost);
    const uint64_t kept = p < kept_below.size() ? kept_below[p] : 0;
    if (kept <= from) return;
    report.lost_kept += acked[p].count_from(from) - acked[p].count_from(kept);
    note(report.problems, fmt::format("producer {}: acknowledged s {}..{} lost after two later rounds of the log",
                                      p, from, kept - 1));
    kept_below[p] = from;
  };
  report.status = for_each_line(path, report.torn_last_line, [&](std::string_view text, uint64_t line) {
    if (text == "run") {
      run.end(kept_below);
      return Status{};
    }
    uint64_t p = 0, s = 0, rounds = 0;
    const std::string terminated = std::string(text) + '\n';
    std::string_view rest = terminated;
    if (!read_field(rest, "", ' ', p) || !read_field(rest, "", ' ', s) || !read_field(rest, "", '\n', rounds) ||
        !rest.empty() || p >= kMaxProducers) {
      return Status::invalid_argument(fmt::format("{}:{}: not an ack line \"<P> <S> <R>\" or \"run\": \"{}\"",
                                                  path, line, text.substr(0, 40)));
    }
    ++report.acks;
    if (p >= acked.size()) acked.resize(p + 1);
    AckedSet& set = acked[p];
    if (!set.empty() && s <= set.last()) {
      // The run that wrote this line found only s - 1 in the log.
      const uint64_t lost = set.count_from(s);
      note(report.problems, fmt::format("producer {}: acknowledged s {}..{} lost at a kill ({} acks; seen at {}:{})",
                                        p, s, set.last(), lost, path, line));
      report.lost_at_kills += lost;
      loss(p, s, lost);
      set.erase_from(s);
    }
    set.add(s);
    run.add(p, s, rounds);
    return Status{};
  });
  run.end(kept_below);
  for (uint64_t p = 0; p < acked.size(); ++p) {
    const uint64_t replayed = p < next.size() ? next[p] : 0;
    if (const uint64_t lost = acked[p].count_from(replayed); lost > 0) {
      note(report.problems, fmt::format("producer {}: acknowledged s {}..{} not in the log ({} acks)", p,
                                        replayed, acked[p].last(), lost));
      report.lost_at_end += lost;
      loss(p, replayed, lost);
    }
  }
  return report;
}

Result<uint64_t> repair_acks_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT ? Result<uint64_t>(0) : Status::from_errno(errno, path);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return Status::from_errno(err, path);
  }
  const auto size = static_cast<uint64_t>(st.st_size);
  uint64_t keep = size;  // bytes up to and including the last '\n'
  char buffer[4096];
  while (keep > 0) {
    const uint64_t from = keep > sizeof(buffer) ? keep - sizeof(buffer) : 0;
    const ssize_t got = ::pread(fd, buffer, keep - from, static_cast<off_t>(from));
    if (got != static_cast<ssize_t>(keep - from)) {
      const int err = got < 0 ? errno : EIO;
      ::close(fd);
      return Status::from_errno(err, path + ": reading the last line");
    }
    const size_t nl = std::string_view(buffer, static_cast<size_t>(got)).rfind('\n');
    if (nl != std::string_view::npos) {
      keep = from + nl + 1;
      break;
    }
    keep = from;
  }
  Status status;
  if (keep < size && ::ftruncate(fd, static_cast<off_t>(keep)) != 0) {
    status = Status::from_errno(errno, path + ": dropping a partial line");
  }
  ::close(fd);
  if (!status.ok()) return status;
  return size - keep;
}

}  // namespace commitlog::tools::stress
