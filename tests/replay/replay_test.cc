// SPDX-License-Identifier: Apache-2.0
// Replay of damaged logs: torn tails, bit flips in each part of the format,
// stale bytes, files that are not segments.
#include <doctest/doctest.h>

#include <filesystem>

#include <fmt/core.h>

#include "commitlog/commit_log.h"
#include "segment/checksum.h"
#include "segment/codec.h"
#include "segment/format.h"
#include "tests/support/log_files.h"
#include "tests/support/temp_dir.h"

namespace commitlog {
namespace {

using testing::flip_bit;
using testing::read_file;
using testing::replay_all;
using testing::segment_files;
using testing::TempDir;
using testing::write_file;

// A log whose sections hold the given numbers of mutations, copied while the
// log was still open (so its newest segment has no end marker, as after a
// crash). Returns each section's positions.
struct CrashedLog {
  std::vector<std::vector<Position>> sections;
  std::vector<std::string> payloads;
};

CrashedLog write_crashed_log(const std::string& dir, const std::vector<int>& section_sizes,
                             uint64_t segment_size = 64 << 10) {
  TempDir live;
  Options options;
  options.directory = live.path();
  options.sync_policy = "batch";
  options.segment_size = segment_size;
  auto log = CommitLog::open(options);
  REQUIRE(log.ok());
  CrashedLog out;
  for (int n : section_sizes) {
    std::vector<std::string> texts;
    for (int i = 0; i < n; ++i) {
      texts.push_back(fmt::format("mutation {} {}", out.payloads.size() + texts.size(), std::string(i * 13 % 200, 'q')));
    }
    std::vector<Mutation> batch;
    for (const auto& t : texts) batch.push_back({7, std::as_bytes(std::span(t.data(), t.size()))});
    auto range = (*log)->append_batch(batch);  // batch policy: one flush, one section
    REQUIRE(range.ok());
    std::vector<Position> positions;
    Position p = range->first;
    for (const auto& t : texts) {
      positions.push_back(p);
      p.offset += format::entry_footprint(t.size());
    }
    out.sections.push_back(positions);
    out.payloads.insert(out.payloads.end(), texts.begin(), texts.end());
  }
  // The allocator's next, still empty segment is left out: the tests below
  // damage the newest segment that holds data.
  for (const auto& f : segment_files(live.path())) {
    if (f.id > out.sections.back().back().segment) continue;
    std::filesystem::copy(f.path, dir + "/" + std::filesystem::path(f.path).filename().string());
  }
  return out;
}

std::string newest_segment(const std::string& dir) { return segment_files(dir).back().path; }

TEST_CASE("a newest segment cut at any byte of its last section is truncation, and what precedes the cut replays") {
  // Segments are preallocated to their capacity: a crash never leaves one short.
  TempDir dir;
  CrashedLog log = write_crashed_log(dir.path(), {3, 4});
  const std::string path = newest_segment(dir.path());
  const std::vector<std::byte> original = read_file(path);
  const uint64_t marker = log.sections[1].front().offset - format::kMarkerSize;
  const uint64_t next_marker = log.sections[1].back().offset + format::entry_footprint(log.payloads.back().size());
  for (uint64_t cut = marker; cut < next_marker + format::kMarkerSize; ++cut) {
    CAPTURE(cut);
    write_file(path, std::vector<std::byte>(original.begin(), original.begin() + static_cast<ptrdiff_t>(cut)));
    auto replayed = replay_all(dir.path());
    CHECK(replayed.report.status.code() == ErrorCode::kCorruption);
    CHECK(replayed.report.status.message().find("file truncated") != std::string::npos);
    size_t whole = 3;  // the entries that end before the cut, in a section whose marker survived
    for (size_t i = 0; i < log.sections[1].size() && cut >= marker + format::kMarkerSize; ++i) {
      whole += log.sections[1][i].offset + format::kEntryHeaderSize + log.payloads[3 + i].size() <= cut;
    }
    CHECK(replayed.payloads == std::vector<std::string>(log.payloads.begin(), log.payloads.begin() + whole));
  }
  write_file(path, original);
  auto whole = replay_all(dir.path());
  REQUIRE(whole.report.status.ok());
  CHECK(whole.payloads == log.payloads);
}

TEST_CASE("unsealed bytes after the last marker are dropped and counted, not replayed") {
  TempDir dir;
  CrashedLog log = write_crashed_log(dir.path(), {2});
  const std::string path = newest_segment(dir.path());
  auto bytes = read_file(path);
  const uint64_t tail = log.sections[0].back().offset + format::entry_footprint(log.payloads.back().size());
  for (uint64_t i = tail + format::kMarkerSize; i < tail + 500; ++i) bytes[i] = std::byte{0x5a};
  // An append of this segment that was never sealed, not an earlier segment's bytes.
  SegmentHeader header;
  REQUIRE(decode_segment_header(bytes, &header) == HeaderProblem::kNone);
  encode_entry_header(bytes.data() + tail + format::kMarkerSize, {500 - format::kMarkerSize, 7, 1, 0}, header.id,
                      tail + format::kMarkerSize);
  write_file(path, bytes);
  auto replayed = replay_all(dir.path());
  REQUIRE(replayed.report.status.ok());
  CHECK(replayed.report.mutations == 2);
  // The exact range dropped: from the zero marker slot to the last non-zero byte.
  CHECK(replayed.report.torn_tail_bytes == 500);
  REQUIRE(replayed.report.problems.size() == 1);
  CHECK(replayed.report.problems[0].offset == tail);
  CHECK(replayed.report.problems[0].bytes == 500);
  CHECK_FALSE(replayed.report.problems[0].corruption);
}

// Damage in an older segment (a later one holds data), so none of it can be a torn tail.
struct TwoSegmentLog {
  TempDir dir;
  std::string first;
  CrashedLog log;
  TwoSegmentLog() {
    // About 9 KiB of mutations in 4 KiB segments.
    log = write_crashed_log(dir.path(), {20, 20, 20}, 4096);
    first = segment_files(dir.path()).front().path;
    REQUIRE(segment_files(dir.path()).size() >= 2);
  }
};

void check_detected(const std::string& dir, const std::string& file, const std::string& kind,
                    size_t total) {
  auto strict = replay_all(dir);
  CHECK(strict.report.status.code() == ErrorCode::kCorruption);
  CHECK(strict.report.status.message().find(file) != std::string::npos);
  CHECK(strict.report.status.message().find(kind) != std::string::npos);
  auto skip = replay_all(dir, RecoveryMode::kSkip);
  CHECK(skip.report.status.ok());
  CHECK(skip.report.corruptions >= 1);
  CHECK(skip.report.skipped_bytes > 0);
  CHECK(skip.report.mutations < total);
}

TEST_CASE("a bit flipped in each part of the format is detected") {
  SUBCASE("file header") {
    TwoSegmentLog t;
    flip_bit(t.first, format::kHeaderCreatedOffset + 1);
    check_detected(t.dir.path(), t.first, "header", t.log.payloads.size());
  }
  SUBCASE("sync marker") {
    TwoSegmentLog t;
    flip_bit(t.first, format::kFirstMarkerOffset + 9, 3);
    check_detected(t.dir.path(), t.first, "offset 64: bad sync marker", t.log.payloads.size());
  }
  SUBCASE("entry header") {
    TwoSegmentLog t;
    flip_bit(t.first, format::kFirstEntryOffset + format::kEntryTableOffset, 1);
    check_detected(t.dir.path(), t.first, "offset 80: bad entry header", t.log.payloads.size());
  }
  SUBCASE("payload") {
    TwoSegmentLog t;
    const Position second = t.log.sections[0][1];
    flip_bit(t.first, second.offset + format::kEntryHeaderSize + 4, 6);
    check_detected(t.dir.path(), t.first, "bad payload checksum", t.log.payloads.size());
    // Skip mode loses exactly that one mutation and never hands out its bytes.
    auto skip = replay_all(t.dir.path(), RecoveryMode::kSkip);
    CHECK(skip.report.mutations == t.log.payloads.size() - 1);
    std::vector<std::string> expected = t.log.payloads;
    expected.erase(expected.begin() + 1);
    CHECK(skip.payloads == expected);
  }
  SUBCASE("end marker of a finished segment") {
    TwoSegmentLog t;
    const auto bytes = read_file(t.first);
    // The end marker is the last valid marker whose next is the end of the
    // segment (its checksum's own last bytes may be zero, so the last non-zero
    // byte does not mark it).
    SegmentHeader header;
    REQUIRE(decode_segment_header(bytes, &header) == HeaderProblem::kNone);
    uint64_t marker = bytes.size() - format::kMarkerSize;
    while (true) {
      const auto m = decode_marker(bytes.data() + marker, header.id, marker, header.flags);
      if (m && m->next == format::kEndOfSegment) break;
      marker -= format::kAlignment;
    }
    const uint64_t end = marker + format::kMarkerSize;
    flip_bit(t.first, end - 2);
    auto strict = replay_all(t.dir.path());
    CHECK(strict.report.status.code() == ErrorCode::kCorruption);
    CHECK(strict.report.status.message().find(
              fmt::format("offset {}: bad sync marker", end - format::kMarkerSize)) != std::string::npos);
  }
}

TEST_CASE("damage in the newest segment followed by valid sealed data is corruption, not a torn tail") {
  TempDir dir;
  CrashedLog log = write_crashed_log(dir.path(), {2, 2, 2});
  const std::string path = newest_segment(dir.path());
  const uint64_t second_marker = log.sections[1].front().offset - format::kMarkerSize;
  flip_bit(path, second_marker + 2);
  auto replayed = replay_all(dir.path());
  CHECK(replayed.report.status.code() == ErrorCode::kCorruption);
  CHECK(replayed.report.status.message().find("offset " + std::to_string(second_marker)) != std::string::npos);
  auto skip = replay_all(dir.path(), RecoveryMode::kSkip);
  CHECK(skip.report.mutations == 4);
}

TEST_CASE("bytes of an older segment left in a newer one's tail are never replayed") {
  TempDir old_dir, dir;
  CrashedLog old_log = write_crashed_log(old_dir.path(), {30});
  CrashedLog log = write_crashed_log(dir.path(), {2});
  const auto old_bytes = read_file(newest_segment(old_dir.path()));
  const std::string path = newest_segment(dir.path());
  auto bytes = read_file(path);
  const uint64_t tail = log.sections[0].back().offset + format::entry_footprint(log.payloads.back().size());
  // Everything after this segment's zero marker comes from the other segment,
  // at the same offsets: its markers and entries are well-formed but foreign.
  std::copy(old_bytes.begin() + static_cast<ptrdiff_t>(tail), old_bytes.end(),
            bytes.begin() + static_cast<ptrdiff_t>(tail));
  write_file(path, bytes);
  auto replayed = replay_all(dir.path());
  REQUIRE(replayed.report.status.ok());
  CHECK(replayed.payloads == log.payloads);
  // Even with its own zero marker overwritten by a foreign one.
  auto skip = replay_all(dir.path(), RecoveryMode::kSkip);
  CHECK(skip.payloads == log.payloads);
}

TEST_CASE("a damaged segment header is corruption of that segment, skip mode replays the others") {
  TempDir dir;
  CrashedLog log = write_crashed_log(dir.path(), {1});
  const std::string real = newest_segment(dir.path());
  auto check = [&](const std::string& file, const std::string& kind, const std::vector<std::string>& rest) {
    auto strict = replay_all(dir.path());
    CHECK(strict.report.status.code() == ErrorCode::kCorruption);
    CHECK(strict.report.status.message().find(file + ": offset 0: " + kind) != std::string::npos);
    auto skip = replay_all(dir.path(), RecoveryMode::kSkip);
    CHECK(skip.report.status.ok());
    CHECK(skip.report.corruptions == 1);
    CHECK(skip.payloads == rest);
  };
  SUBCASE("a file of garbage named like an older segment") {
    const std::string bad = dir.file("CommitLog-1-1.log");
    write_file(bad, std::vector<std::byte>(4096, std::byte{'x'}));
    check(bad, "not a commit log segment (bad magic)", log.payloads);
  }
  SUBCASE("one bit of the magic") {
    flip_bit(real, format::kHeaderMagicOffset + 3);
    check(real, "not a commit log segment (bad magic)", {});
  }
  SUBCASE("a header cut short") {
    auto bytes = read_file(real);
    bytes.resize(30);
    write_file(real, bytes);
    check(real, "file shorter than a segment header", {});
  }
}

TEST_CASE("an intact header of a format this build does not read is an input error naming the file") {
  TempDir dir;
  write_crashed_log(dir.path(), {1});
  const std::string real = newest_segment(dir.path());
  auto bytes = read_file(real);
  store_u16(bytes.data() + format::kHeaderVersionOffset, 99);
  store_u64(bytes.data() + format::kHeaderChecksumOffset, checksum({bytes.data(), format::header_checksummed_bytes(format::kFormatVersion)}));
  write_file(real, bytes);
  for (RecoveryMode mode : {RecoveryMode::kTolerateTornTail, RecoveryMode::kSkip}) {
    auto r = replay_all(dir.path(), mode);
    CHECK(r.report.status.code() == ErrorCode::kInvalidArgument);
    CHECK(r.report.status.message().find(real + ": unknown segment format version") != std::string::npos);
    CHECK(r.payloads.empty());
  }
}

TEST_CASE("a directory that does not exist yet holds an empty log") {
  TempDir dir;
  auto r = replay_all(dir.file("not-yet"));
  CHECK(r.report.status.ok());
  CHECK(r.report.segments == 0);
  CHECK(r.payloads.empty());
}

TEST_CASE("a preallocated segment whose header was never written is an unused leftover") {
  TempDir dir;
  CrashedLog log = write_crashed_log(dir.path(), {2});
  const uint64_t id = segment_files(dir.path()).back().id + 1;
  write_file(dir.file(fmt::format("CommitLog-1-{}.log", id)), std::vector<std::byte>(1 << 16));
  auto replayed = replay_all(dir.path());
  REQUIRE(replayed.report.status.ok());
  CHECK(replayed.payloads == log.payloads);
}

TEST_CASE("replay from a position skips what came before") {
  TempDir dir;
  CrashedLog log = write_crashed_log(dir.path(), {3, 3});
  ReplayOptions options;
  options.from = log.sections[1][1];
  std::vector<Position> seen;
  auto report = replay_directory(dir.path(), options, [&](const ReplayedMutation& m) {
    seen.push_back(m.position);
    return Status{};
  });
  REQUIRE(report.status.ok());
  CHECK(seen == std::vector<Position>{log.sections[1][1], log.sections[1][2]});
}

}  // namespace
}  // namespace commitlog
