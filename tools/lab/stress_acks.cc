// SPDX-License-Identifier: Apache-2.0
#include "tools/lab/stress_acks.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <map>
#include <string_view>

#include <fmt/core.h>

namespace commitlog::tools::stress {
namespace {

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
  template <typename F>
  void for_each(F&& f) const {
    for (const auto& [lo, hi] : intervals_) {
      for (uint64_t s = lo; s <= hi; ++s) f(s);
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

// One line of the acks file.
struct Line {
  enum class Kind { kRun, kAck, kDiscard };
  Kind kind = Kind::kRun;
  uint64_t p = 0, s = 0, rounds = 0;
  std::optional<Position> position;
};

// Reads "<seg>:<off>" and the line's end.
bool read_position(std::string_view& rest, std::optional<Position>& position) {
  Position at;
  if (!read_field(rest, "", ':', at.segment) || !read_field(rest, "", '\n', at.offset) ||
      !rest.empty()) {
    return false;
  }
  position = at;
  return true;
}

Result<Line> parse_line(std::string_view text, const std::string& path, uint64_t number) {
  Line line;
  if (text == "run") return line;
  const std::string terminated = std::string(text) + '\n';
  std::string_view rest = terminated;
  if (rest.starts_with("discard ")) {
    line.kind = Line::Kind::kDiscard;
    rest.remove_prefix(8);
    if (read_position(rest, line.position)) return line;
  } else if (read_field(rest, "", ' ', line.p) && read_field(rest, "", ' ', line.s) &&
             line.p < kMaxProducers) {
    line.kind = Line::Kind::kAck;
    std::string_view three = rest;  // "<R>\n", the lines of older files
    if (read_field(three, "", '\n', line.rounds) && three.empty()) return line;
    if (read_field(rest, "", ' ', line.rounds) && read_position(rest, line.position)) return line;
  }
  return Status::invalid_argument(
      fmt::format("{}:{}: not an ack line \"<P> <S> <R> <seg>:<off>\", \"discard <seg>:<off>\" or "
                  "\"run\": \"{}\"",
                  path, number, text.substr(0, 60)));
}

// Calls `line(parsed, number)` for each complete line of the file at `path`.
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
      auto parsed = parse_line(pending, path, ++number);
      status = parsed.ok() ? line(*parsed, number) : parsed.status();
      pending.clear();
    }
    pending.append(chunk);
  }
  ::close(fd);
  torn_last_line = !pending.empty();
  return status;
}

// One run's acks with their rounds: which of them the log had kept by the
// run's last ack line (see stress_acks.h).
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

size_t index_of(const LogScan& scan, uint64_t p, const ReplayedEntry* e) {
  return static_cast<size_t>(e - scan.entries[p].data());
}

}  // namespace

Status write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::from_errno(errno, "write");
    text.remove_prefix(static_cast<size_t>(n));
  }
  return {};
}

size_t format_ack_line(char (&out)[kMaxAckLineSize], uint64_t p, uint64_t s, uint64_t rounds,
                       Position position) {
  const auto end = fmt::format_to_n(out, sizeof(out), "{} {} {} {}:{}\n", p, s, rounds,
                                    position.segment, position.offset);
  return std::min(end.size, sizeof(out));
}

std::string format_discard_line(Position up_to) {
  return fmt::format("discard {}:{}\n", up_to.segment, up_to.offset);
}

Result<std::optional<Position>> read_discard_point(const std::string& path) {
  std::optional<Position> point;
  bool torn = false;
  Status status = for_each_line(path, torn, [&](const Line& line, uint64_t) {
    if (line.kind == Line::Kind::kDiscard) point = std::max(point, line.position);
    return Status{};
  });
  if (!status.ok()) return status;
  return point;
}

AckReport analyze_acks(const std::string& path, const LogScan& scan,
                       std::optional<Position> discard_point) {
  AckReport report;
  report.discard_point = discard_point;
  std::vector<AckedSet> acked;
  std::vector<uint64_t> kept_below;  // per producer: acks below this S were kept
  // Per replayed entry (as scan.entries): the position its last ack names.
  std::vector<std::vector<std::optional<Position>>> acked_at(scan.entries.size());
  for (size_t p = 0; p < scan.entries.size(); ++p) acked_at[p].resize(scan.entries[p].size());
  RunRounds run;
  // `lost` acks of producer `p`, S `from` to `to`; those the log had kept count too.
  auto loss = [&](uint64_t p, uint64_t from, uint64_t to, uint64_t lost) {
    ++report.loss_events;
    report.max_lost_per_event = std::max(report.max_lost_per_event, lost);
    const uint64_t kept = p < kept_below.size() ? kept_below[p] : 0;
    if (kept <= from) return;
    report.lost_kept += acked[p].count_from(from) - acked[p].count_from(std::min(to + 1, kept));
    note(report.problems,
         fmt::format("producer {}: acknowledged s {}..{} lost after two later rounds of the log", p,
                     from, std::min(to + 1, kept) - 1));
    kept_below[p] = from;
  };
  report.status =
      for_each_line(path, report.torn_last_line, [&](const Line& line, uint64_t number) {
        if (line.kind == Line::Kind::kRun) run.end(kept_below);
        if (line.kind != Line::Kind::kAck) return Status{};
        const uint64_t p = line.p, s = line.s;
        ++report.acks;
        if (p >= acked.size()) {
          acked.resize(p + 1);
          report.resume_at.resize(p + 1, 0);
        }
        AckedSet& set = acked[p];
        if (!set.empty() && s <= set.last()) {
          // The run that wrote this line found only s - 1 in the log.
          const uint64_t lost = set.count_from(s);
          note(report.problems,
               fmt::format(
                   "producer {}: acknowledged s {}..{} lost at a kill ({} acks; seen at {}:{})", p,
                   s, set.last(), lost, path, number));
          report.lost_at_kills += lost;
          loss(p, s, set.last(), lost);
          set.erase_from(s);
          report.resume_at[p] = std::min(report.resume_at[p], s);
        }
        set.add(s);
        run.add(p, s, line.rounds);
        if (line.position && discard_point && *line.position <= *discard_point) {
          report.resume_at[p] = std::max(report.resume_at[p], s + 1);
        }
        if (const ReplayedEntry* e = scan.find(p, s)) {
          acked_at[p][index_of(scan, p, e)] = line.position;
        }
        return Status{};
      });
  run.end(kept_below);
  for (uint64_t p = 0; p < acked.size(); ++p) {
    uint64_t lost = 0, first = 0, last = 0;
    acked[p].for_each([&](uint64_t s) {
      const ReplayedEntry* e = scan.find(p, s);
      if (e == nullptr) {
        if (s < report.resume_at[p]) {
          ++report.discarded;
        } else {
          first = lost++ == 0 ? s : first;
          last = s;
        }
        return;
      }
      const std::optional<Position>& at = acked_at[p][index_of(scan, p, e)];
      if (!at || *at == e->position) return;
      note(report.problems,
           fmt::format("producer {} s {}: acknowledged at {}, replayed at {}{}", p, s,
                       at->to_string(), e->position.to_string(),
                       e->position < *at ? "" : " (lost and appended again, or a stale entry)"));
      if (e->position < *at) {
        ++report.misplaced;
        return;
      }
      ++report.lost_at_kills;
      loss(p, s, s, 1);
    });
    if (lost > 0) {
      note(report.problems,
           fmt::format("producer {}: acknowledged s {}..{} not in the log ({} acks)", p, first,
                       last, lost));
      report.lost_at_end += lost;
      loss(p, first, last, lost);
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
