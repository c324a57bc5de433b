// SPDX-License-Identifier: Apache-2.0
// Proved tails (segment/FORMAT.md, Seals): an end marker that records what
// it covers, and the seal that says where a segment's bytes are final, so
// damage to the end of a closed segment never passes for a torn tail. From
// bytes built through the codec, then from logs the library wrote.
#include <doctest/doctest.h>

#include <string>

#include <fmt/core.h>
#include <vector>

#include "commitlog/lifecycle/access_mode.h"
#include "commitlog/commit_log.h"
#include "commitlog/replayer.h"
#include "segment/codec.h"
#include "segment/format.h"
#include "tests/support/fault_file_system.h"
#include "tests/support/log_files.h"
#include "tests/support/segment_bytes.h"

namespace commitlog {
namespace {

using testing::fill;
using testing::flip_bit;
using testing::read_segment;
using testing::SegmentBuilder;

using Strings = std::vector<std::string>;

// Two data sections, then closed as the log closes: m0 m1 | m2 m3 | end.
SegmentBuilder closed_segment(uint16_t version = format::kFormatVersion) {
  SegmentBuilder b(1000, 4096, format::kFlagSyncedMarks, 0, version);
  b.section({"m0", "m1"});
  b.section({"m2", "m3"});
  b.close();
  return b;
}

// The end marker's offset: the open marker after close().
uint64_t end_marker(const SegmentBuilder& b) { return b.open_marker(); }

TEST_CASE("proved tail: zeros that end at a valid end marker are durable damage, not a torn tail") {
  SegmentBuilder b = closed_segment();
  const uint64_t from = b.entries()[2] - format::kMarkerSize;  // the second section's marker
  for (bool sealed : {false, true}) {
    CAPTURE(sealed);
    if (sealed) b.seal();
    std::vector<std::byte> file = b.plain();
    fill(file, from, end_marker(b) - from);
    const auto r = read_segment(file);
    CHECK(r.payloads == Strings{"m0", "m1"});
    REQUIRE_FALSE(r.damage.empty());
    CHECK(r.damage.front().offset == from);
    CHECK(r.damage.front().durable);
    CHECK(r.end.kind == EndKind::kClosed);
  }
}

TEST_CASE("proved tail: a version 1 end marker records nothing, so the same zeros read as a torn tail") {
  const SegmentBuilder b = closed_segment(1);
  std::vector<std::byte> file = b.plain();
  const uint64_t from = b.entries()[2] - format::kMarkerSize;
  fill(file, from, end_marker(b) - from);
  const auto r = read_segment(file);
  CHECK(r.payloads == Strings{"m0", "m1"});
  REQUIRE(r.damage.size() == 1);
  CHECK_FALSE(r.damage.front().durable);
}

TEST_CASE("proved tail: zeros over the end marker to the end of the data are corruption once sealed") {
  SegmentBuilder b = closed_segment();
  const uint64_t from = b.entries()[2] - format::kMarkerSize;
  {
    std::vector<std::byte> unsealed = b.plain();
    fill(unsealed, from, unsealed.size() - from);
    const auto r = read_segment(unsealed);
    CHECK(r.damage.empty());  // the one case bytes alone cannot tell from loss
    CHECK(r.end.kind == EndKind::kEndOfData);
  }
  b.seal();
  for (bool compressed : {false, true}) {
    CAPTURE(compressed);
    std::vector<uint64_t> sections;
    std::vector<std::byte> file = compressed ? b.compressed(&sections) : b.plain();
    // Plain: from the second section's marker; compressed: the file from the
    // second flush's section on.
    const uint64_t cut = compressed ? sections.at(1) : from;
    fill(file, cut, file.size() - cut);
    const auto r = read_segment(file);
    CHECK(r.payloads == Strings{"m0", "m1"});
    REQUIRE_FALSE(r.damage.empty());
    CHECK(r.damage.back().kind == DamageKind::kEndsBeforeSeal);
    CHECK(r.damage.back().durable);
    CHECK(r.damage.back().offset + r.damage.back().length == end_marker(b) + format::kMarkerSize);
  }
}

TEST_CASE("proved tail: a zeroed end marker alone is caught by the seal, an intact sealed segment reads clean") {
  SegmentBuilder b = closed_segment();
  b.seal();
  const auto clean = read_segment(b.plain());
  CHECK(clean.damage.empty());
  CHECK(clean.end.kind == EndKind::kClosed);
  std::vector<std::byte> file = b.plain();
  fill(file, end_marker(b), format::kMarkerSize);
  const auto r = read_segment(file);
  CHECK(r.payloads == Strings{"m0", "m1", "m2", "m3"});
  REQUIRE(r.damage.size() == 1);
  CHECK(r.damage.front().kind == DamageKind::kEndsBeforeSeal);
}

TEST_CASE("proved tail: a damaged seal is reported as durable damage and the data still reads") {
  SegmentBuilder b = closed_segment();
  b.seal();
  std::vector<std::byte> file = b.plain();
  flip_bit(file, format::kHeaderSealOffset + 1);
  SegmentHeader header;
  REQUIRE(decode_segment_header(file, &header) == HeaderProblem::kNone);
  CHECK(header.seal_damaged);
  CHECK(header.sealed_end == 0);
  const auto r = read_segment(file);
  CHECK(r.payloads == Strings{"m0", "m1", "m2", "m3"});
  REQUIRE(r.damage.size() == 1);
  CHECK(r.damage.front().kind == DamageKind::kBadSeal);
  CHECK(r.damage.front().durable);
}

TEST_CASE("proved tail: version 1 segments, plain and compressed, closed and torn, still read") {
  for (bool closed : {false, true}) {
    SegmentBuilder b(1000, 4096, format::kFlagSyncedMarks, 0, 1);
    b.section({"old0", "old1"});
    b.section({"old2"});
    if (closed) b.close();
    for (bool compressed : {false, true}) {
      CAPTURE(closed);
      CAPTURE(compressed);
      const std::vector<std::byte> file = compressed ? b.compressed() : b.plain();
      SegmentHeader header;
      REQUIRE(decode_segment_header(file, &header) == HeaderProblem::kNone);
      CHECK(header.version == 1);
      const auto r = read_segment(file);
      CHECK(r.payloads == Strings{"old0", "old1", "old2"});
      CHECK(r.damage.empty());
      CHECK(r.end.kind == (closed ? EndKind::kClosed : EndKind::kEndOfData));
    }
  }
}

// Library-written logs: a clean close seals the last segment, and an open
// after a crash seals the crashed run's newest segment where its data ended.
ReplayReport replay_of(FileSystem& fs, size_t* mutations = nullptr) {
  ReplayOptions options;
  options.file_system = &fs;
  options.mode = RecoveryMode::kSkip;
  size_t n = 0;
  ReplayReport r = replay_directory(testing::kLogDir, options, [&](const ReplayedMutation&) {
    ++n;
    return Status{};
  });
  if (mutations != nullptr) *mutations = n;
  return r;
}

SegmentHeader header_of(FileSystem& fs, const std::string& path) {
  auto bytes = read_whole_file(fs, path);
  REQUIRE(bytes.ok());
  SegmentHeader h;
  REQUIRE(decode_segment_header(*bytes, &h) == HeaderProblem::kNone);
  return h;
}

Options small_log(FileSystem& fs, DiskAccessMode mode, bool compressed) {
  Options o;
  o.directory = testing::kLogDir;
  o.file_system = &fs;
  o.sync_policy = "batch";
  o.segment_size = 64 << 10;
  o.disk_access_mode = mode;
  o.compression = compressed ? Compression::kLz4 : Compression::kNone;
  return o;
}

TEST_CASE("proved tail: a closed log's segments are sealed, a crashed run is sealed by the next open") {
  for (DiskAccessMode mode : {DiskAccessMode::kMmap, DiskAccessMode::kStandard, DiskAccessMode::kDirect}) {
    for (bool compressed : {false, true}) {
      if (mode == DiskAccessMode::kMmap && compressed) continue;  // mmap is plain only
      CAPTURE(access_mode_name(mode));
      CAPTURE(compressed);
      testing::FaultFileSystem fs;
      {
        auto log = CommitLog::open(small_log(fs, mode, compressed));
        REQUIRE_MESSAGE(log.ok(), log.status().to_string());
        for (int i = 0; i < 300; ++i) REQUIRE((*log)->append(1, std::string(500, static_cast<char>('a' + i % 26))).ok());
        REQUIRE((*log)->close().ok());
      }
      size_t delivered = 0;
      ReplayReport closed = replay_of(fs, &delivered);
      CHECK(closed.intact());
      CHECK(closed.unproved_tails.empty());
      CHECK(delivered == 300);
      auto files = list_segment_files(fs, testing::kLogDir);
      REQUIRE(files.ok());
      size_t sealed = 0;
      for (const SegmentFile& f : *files) sealed += header_of(fs, f.path).sealed_end != 0;
      CHECK(sealed >= 2);  // every finished segment; the spare holds nothing

      // A crash: the power goes out after more appends; nothing seals them.
      {
        auto log = CommitLog::open(small_log(fs, mode, compressed));
        REQUIRE(log.ok());
        for (int i = 0; i < 40; ++i) REQUIRE((*log)->append(2, std::string(300, 'z')).ok());
        fs.pull_plug();
        (*log)->close().ignore();
      }
      auto crashed = fs.crash(testing::CrashMode::kDrop, 1);
      ReplayReport before = replay_of(*crashed, &delivered);
      CHECK(before.intact());
      CHECK(delivered == 340);
      CHECK(before.unproved_tails.size() == 1);
      {
        auto log = CommitLog::open(small_log(*crashed, mode, compressed));
        REQUIRE_MESSAGE(log.ok(), log.status().to_string());
        REQUIRE((*log)->close().ok());
      }
      ReplayReport after = replay_of(*crashed, &delivered);
      CHECK(after.intact());
      CHECK(after.unproved_tails.empty());
      CHECK(delivered == 340);
    }
  }
}

TEST_CASE("proved tail: a log of version 1, 2 and 3 segments opens, and old and new segments replay in order") {
  testing::FaultFileSystem fs;
  REQUIRE(fs.create_dirs(testing::kLogDir).ok());
  // A version 1 run of two segments, then a version 2 run of two; each
  // run's second segment is its end, never sealed (its writer crashed).
  for (uint64_t id : {1000, 1001, 1002, 1003}) {
    const uint16_t version = id < 1002 ? 1 : 2;
    const bool first_of_run = id % 2 == 0;
    SegmentBuilder b(id, 4096, format::kFlagSyncedMarks, first_of_run ? 0 : id - 1, version);
    b.section({"old " + std::to_string(id)});
    if (first_of_run) b.close();
    if (first_of_run && version >= 2) b.seal();
    auto f = fs.open(fmt::format("{}/CommitLog-{}-{}.log", testing::kLogDir, version, id), OpenMode::kCreateNew);
    REQUIRE(f.ok());
    REQUIRE((*f)->write_at(0, b.plain()).ok());
  }
  {
    auto log = CommitLog::open(small_log(fs, DiskAccessMode::kStandard, false));
    REQUIRE_MESSAGE(log.ok(), log.status().to_string());
    REQUIRE((*log)->append(1, std::string("new")).ok());
    REQUIRE((*log)->close().ok());
  }
  std::vector<std::string> payloads;
  ReplayOptions options;
  options.file_system = &fs;
  const ReplayReport r = replay_directory(testing::kLogDir, options, [&](const ReplayedMutation& m) {
    payloads.emplace_back(reinterpret_cast<const char*>(m.payload.data()), m.payload.size());
    return Status{};
  });
  CHECK(r.intact());
  CHECK(payloads == Strings{"old 1000", "old 1001", "old 1002", "old 1003", "new"});
  // The version 2 run's end is sealed by the open; the version 1 run's end
  // cannot be, so it stays unproved.
  REQUIRE(r.unproved_tails.size() == 1);
  CHECK(r.unproved_tails.front().find("CommitLog-1-1001.log") != std::string::npos);
}

}  // namespace
}  // namespace commitlog
