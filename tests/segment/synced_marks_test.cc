// SPDX-License-Identifier: Apache-2.0
// Markers that record what was flushed (format::kFlagSyncedMarks): the writer
// sets the flag and fills in `synced`, and the replayer takes damage that no
// later marker proves flushed for a torn tail in a run's newest segment only.
#include <doctest/doctest.h>
#include <fmt/core.h>

#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "commitlog/commit_log.h"
#include "segment/storage/buffer_pool.h"
#include "segment/checksum.h"
#include "segment/format.h"
#include "segment/file_name.h"
#include "segment/storage/mapped_segment.h"
#include "segment/segment_image.h"
#include "segment/segment_reader.h"
#include "tests/support/log_files.h"
#include "tests/support/temp_dir.h"

namespace commitlog {
namespace {

using testing::read_file;
using testing::replay_all;
using testing::segment_files;
using testing::TempDir;
using testing::write_file;

constexpr uint64_t kSegmentCapacity = 4096;

// A segment written byte by byte, as the writer would, with the `synced`
// of each marker chosen by the test.
class MarkedSegmentBuilder {
 public:
  MarkedSegmentBuilder(uint64_t id, uint64_t previous_id, uint16_t flags)
      : id_(id), flags_(flags), bytes_(kSegmentCapacity) {
    std::byte* h = bytes_.data();
    store_u64(h + format::kHeaderMagicOffset, format::kMagic);
    store_u16(h + format::kHeaderVersionOffset, format::kFormatVersion);
    store_u16(h + format::kHeaderFlagsOffset, flags);
    store_u32(h + format::kHeaderSizeOffset, format::kHeaderSize);
    store_u64(h + format::kHeaderIdOffset, id);
    store_u64(h + format::kHeaderCapacityOffset, kSegmentCapacity);
    store_u64(h + format::kHeaderPreviousIdOffset, previous_id);
    store_u64(h + format::kHeaderChecksumOffset, checksum({h, format::header_checksummed_bytes(format::kFormatVersion)}));
  }

  // Seals `payloads` into a section whose marker records `synced`; returns
  // the marker's offset. The next marker's slot stays zero.
  uint64_t section(const std::vector<std::string>& payloads, uint64_t synced) {
    const uint64_t marker = open_;
    uint64_t at = marker + format::kMarkerSize;
    for (const std::string& p : payloads) {
      std::byte* e = bytes_.data() + at;
      store_u32(e + format::kEntryLengthOffset,
                static_cast<uint32_t>(format::kEntryHeaderSize + p.size()));
      store_u32(e + format::kEntryTableOffset, 7);
      store_u64(e + format::kEntryTimeOffset, 1);
      store_u64(e + format::kEntryPayloadChecksumOffset, checksum(std::as_bytes(std::span(p))));
      store_u64(e + format::kEntryHeaderChecksumOffset, entry_header_checksum(e, id_, at));
      std::memcpy(e + format::kEntryHeaderSize, p.data(), p.size());
      entries.push_back(at);
      at += format::entry_footprint(p.size());
    }
    const uint64_t word =
        (flags_ & format::kFlagSyncedMarks) != 0 ? format::marker_word(at, synced) : at;
    store_u64(bytes_.data() + marker, word);
    store_u64(bytes_.data() + marker + 8, marker_checksum(word, id_, marker));
    open_ = at;
    return marker;
  }

  // Writes the end-of-segment marker in the open marker's slot.
  void close() {
    store_u64(bytes_.data() + open_, format::kEndOfSegment);
    store_u64(bytes_.data() + open_ + 8, marker_checksum(format::kEndOfSegment, id_, open_));
  }

  void write(const std::string& dir) const {
    write_file(dir + "/" + segment_file_name(id_), bytes_);
  }
  void flip_bit(uint64_t offset) { bytes_[offset] ^= std::byte{1}; }

  std::vector<uint64_t> entries;  // offsets, in order

 private:
  const uint64_t id_;
  const uint16_t flags_;
  std::vector<std::byte> bytes_;
  uint64_t open_ = format::kFirstMarkerOffset;
};

constexpr uint64_t kId = 1000;

enum class MarkDamage { kPayload, kEntryHeader, kMarker };

// Three sections of two entries each, the damage in the second section.
// The second marker records a flush that covered the first section; the
// third records either the same (`flushed_second` false: the second section
// was only sealed, as periodic does between fsyncs) or a flush that covered
// the second section too. Returns the damage's offset.
uint64_t three_sections(MarkedSegmentBuilder& b, MarkDamage damage, bool flushed_second) {
  const uint64_t first = b.section({"m0", "m1"}, format::kFirstMarkerOffset);
  const uint64_t second = b.entries.back() + format::entry_footprint(2);
  REQUIRE(b.section({"m2", "m3"}, second) == second);
  const uint64_t third = b.entries.back() + format::entry_footprint(2);
  REQUIRE(b.section({"m4", "m5"}, flushed_second ? third : second) == third);
  CHECK(first == format::kFirstMarkerOffset);
  switch (damage) {
    case MarkDamage::kPayload: b.flip_bit(b.entries[2] + format::kEntryHeaderSize); return b.entries[2];
    case MarkDamage::kEntryHeader:
      b.flip_bit(b.entries[2] + format::kEntryTableOffset);
      return b.entries[2];
    case MarkDamage::kMarker: b.flip_bit(second + 3); return second;
  }
  return 0;
}

// Strict replay ends at the damage, with no gap; skip replays the third
// section too, which survived.
void check_torn_tail(const std::string& dir, uint64_t damage_at) {
  for (RecoveryMode mode : {RecoveryMode::kTolerateTornTail, RecoveryMode::kSkip}) {
    CAPTURE(static_cast<int>(mode));
    auto replayed = replay_all(dir, mode);
    CHECK_MESSAGE(replayed.report.status.ok(), replayed.report.status.to_string());
    CHECK(replayed.report.corruptions == 0);
    CHECK(replayed.report.torn_tail_bytes > 0);
    REQUIRE(replayed.report.problems.size() == 1);
    CHECK(replayed.report.problems[0].offset == damage_at);
    CHECK_FALSE(replayed.report.problems[0].corruption);
    if (mode == RecoveryMode::kTolerateTornTail) {
      CHECK(replayed.payloads == std::vector<std::string>{"m0", "m1"});
    } else {
      REQUIRE(replayed.payloads.size() >= 4);
      CHECK(replayed.payloads[0] == "m0");
      CHECK(replayed.payloads[1] == "m1");
      CHECK(replayed.payloads[replayed.payloads.size() - 2] == "m4");
      CHECK(replayed.payloads.back() == "m5");
    }
  }
}

void check_corruption(const std::string& dir, uint64_t damage_at) {
  auto strict = replay_all(dir);
  CHECK(strict.report.status.code() == ErrorCode::kCorruption);
  CHECK(strict.report.status.message().find(fmt::format("offset {}:", damage_at)) !=
        std::string::npos);
  CHECK(strict.payloads == std::vector<std::string>{"m0", "m1"});
  auto skip = replay_all(dir, RecoveryMode::kSkip);
  CHECK(skip.report.status.ok());
  CHECK(skip.report.corruptions == 1);
  CHECK(skip.payloads.size() >= 4);  // the third section is replayed
}

// Builds three_sections() with each kind of damage and checks the replay.
template <typename Check>
void for_each_damage(bool flushed_second, Check check) {
  for (MarkDamage damage : {MarkDamage::kPayload, MarkDamage::kEntryHeader, MarkDamage::kMarker}) {
    CAPTURE(static_cast<int>(damage));
    TempDir dir;
    MarkedSegmentBuilder b(kId, 0, format::kFlagSyncedMarks);
    const uint64_t at = three_sections(b, damage, flushed_second);
    b.write(dir.path());
    check(dir.path(), at);
  }
}

TEST_CASE(
    "synced marks: damage no later marker proves flushed is a torn tail of the newest segment") {
  for_each_damage(/*flushed_second=*/false, check_torn_tail);
}

TEST_CASE("synced marks: damage a later marker proves flushed is corruption") {
  for_each_damage(/*flushed_second=*/true, check_corruption);
}

TEST_CASE("synced marks: skip mode judges each damage by the markers after it") {
  TempDir dir;
  MarkedSegmentBuilder b(kId, 0, format::kFlagSyncedMarks);
  b.section({"m0", "m1"}, format::kFirstMarkerOffset);
  const uint64_t second = b.entries.back() + format::entry_footprint(2);
  b.section({"m2", "m3"}, second);
  const uint64_t third = b.entries.back() + format::entry_footprint(2);
  b.section({"m4", "m5"}, third);  // a flush covered the second section
  b.section({"m6", "m7"}, third);  // then sealed without flushing
  b.section({"m8"}, third);
  b.flip_bit(b.entries[2] + format::kEntryHeaderSize);
  b.flip_bit(b.entries[6] + format::kEntryHeaderSize);
  b.write(dir.path());
  auto skip = replay_all(dir.path(), RecoveryMode::kSkip);
  CHECK(skip.report.status.ok());
  CHECK(skip.payloads == std::vector<std::string>{"m0", "m1", "m3", "m4", "m5", "m7", "m8"});
  CHECK(skip.report.corruptions == 1);
  REQUIRE(skip.report.problems.size() == 2);
  CHECK(skip.report.problems[0].offset == b.entries[2]);
  CHECK(skip.report.problems[0].corruption);
  CHECK(skip.report.problems[1].offset == b.entries[6]);
  CHECK_FALSE(skip.report.problems[1].corruption);
  CHECK(skip.report.torn_tail_bytes > 0);
}

TEST_CASE("synced marks: the same damage in a segment that is not its run's newest is corruption") {
  for (MarkDamage damage : {MarkDamage::kPayload, MarkDamage::kMarker}) {
    CAPTURE(static_cast<int>(damage));
    TempDir dir;
    MarkedSegmentBuilder b(kId, 0, format::kFlagSyncedMarks);
    const uint64_t at = three_sections(b, damage, /*flushed_second=*/false);
    b.close();
    b.write(dir.path());
    MarkedSegmentBuilder later(kId + 1, kId, format::kFlagSyncedMarks);
    later.section({"n0"}, format::kFirstMarkerOffset);
    later.write(dir.path());
    check_corruption(dir.path(), at);
  }
}

TEST_CASE("synced marks: a segment without the flag reads as before, its damage is corruption") {
  for (MarkDamage damage : {MarkDamage::kPayload, MarkDamage::kEntryHeader, MarkDamage::kMarker}) {
    CAPTURE(static_cast<int>(damage));
    TempDir dir;
    MarkedSegmentBuilder b(kId, 0, 0);
    const uint64_t at = three_sections(b, damage, /*flushed_second=*/false);
    b.write(dir.path());
    check_corruption(dir.path(), at);
  }
  SUBCASE("and its intact sections replay") {
    TempDir dir;
    MarkedSegmentBuilder b(kId, 0, 0);
    b.section({"a", "b"}, 0);
    b.section({"c"}, 0);
    b.write(dir.path());
    auto replayed = replay_all(dir.path());
    CHECK(replayed.report.status.ok());
    CHECK(replayed.payloads == std::vector<std::string>{"a", "b", "c"});
  }
}

TEST_CASE("synced marks: a marker whose synced lies past its own offset is not valid") {
  TempDir dir;
  MarkedSegmentBuilder b(kId, 0, format::kFlagSyncedMarks);
  b.section({"a"}, format::kFirstMarkerOffset + 8);
  b.write(dir.path());
  auto replayed = replay_all(dir.path());
  CHECK(replayed.report.mutations == 0);
}

uint16_t header_flags(const std::string& path) {
  return load_u16(read_file(path).data() + format::kHeaderFlagsOffset);
}

TEST_CASE("synced marks: every new segment has the flag, plain and compressed") {
  for (Compression compression : {Compression::kNone, Compression::kLz4}) {
    TempDir dir;
    Options o;
    o.directory = dir.path();
    o.sync_policy = "batch";
    o.segment_size = 64 << 10;
    o.compression = compression;
    {
      auto log = CommitLog::open(o);
      REQUIRE(log.ok());
      REQUIRE((*log)->append(1, "x").ok());
      REQUIRE((*log)->close().ok());
    }
    const auto files = segment_files(dir.path());
    REQUIRE(!files.empty());
    for (const auto& f : files) {
      CHECK((header_flags(f.path) & format::kFlagSyncedMarks) != 0);
      CHECK(((header_flags(f.path) & format::kFlagLz4Sections) != 0) ==
            (compression == Compression::kLz4));
    }
  }
}

TEST_CASE("synced marks: a segment size of 4 GiB or more is refused") {
  TempDir dir;
  Options o;
  o.directory = dir.path();
  o.segment_size = uint64_t{1} << 32;
  auto log = CommitLog::open(o);
  CHECK(log.status().code() == ErrorCode::kInvalidArgument);
}

// Appends one entry to `segment` and returns its offset.
uint64_t append(MappedSegment& segment, const std::string& text) {
  const auto payload = std::as_bytes(std::span(text));
  const auto at = segment.reserve(format::entry_footprint(payload.size()));
  REQUIRE(at.has_value());
  REQUIRE(segment.write_entry(*at, 7, 1, payload).ok());
  return *at;
}

// Each section's marker offset and the `synced` it records, as the reader sees them.
std::vector<std::pair<uint64_t, uint64_t>> markers_of(const std::string& path) {
  const auto bytes = read_file(path);
  SegmentHeader header;
  REQUIRE(decode_segment_header(bytes, &header) == HeaderProblem::kNone);
  const SegmentImage image = load_segment_image(bytes, header);
  SegmentReader reader(image, header);
  std::vector<std::pair<uint64_t, uint64_t>> markers;
  while (true) {
    SegmentItem item = reader.next();
    if (std::holds_alternative<SegmentEnd>(item)) break;
    REQUIRE(std::holds_alternative<SegmentEntry>(item));
    REQUIRE(reader.section().synced.has_value());
    markers.emplace_back(reader.section().marker, *reader.section().synced);
  }
  return markers;
}

// What periodic does between fsyncs: seals without flushing. A marker records
// the last flush that completed, never the one its seal is for.
TEST_CASE("synced marks: each marker records the last completed flush, plain and compressed") {
  for (Compression compression : {Compression::kNone, Compression::kLz4}) {
    for (bool staged : {false, true}) {
      CAPTURE(static_cast<int>(compression));
      CAPTURE(staged);
      TempDir dir;
      BufferPool pool(64 << 10, 1);
      uint16_t flags = format::kFlagSyncedMarks;
      if (compression == Compression::kLz4) flags |= format::kFlagLz4Sections;
      auto created = MappedSegment::create(*posix_file_system(), *real_clock(), dir.path(),
                                           SegmentFileInfo{kId, 64 << 10, flags, 0}, &pool);
      REQUIRE_MESSAGE(created.ok(), created.status().to_string());
      MappedSegment& segment = **created;
      // stage(), commit() and committed() at once, or with the next seal
      // before commit(), as the sync thread overlaps them.
      std::optional<MappedSegment::Staged> in_flight;
      auto flush = [&] {
        auto s = segment.stage(false);
        REQUIRE(s.ok());
        if (!staged) {
          REQUIRE(segment.commit(*s).ok());
          segment.committed(*s);
          return;
        }
        in_flight = std::move(s).value();
      };
      auto finish = [&] {
        if (!in_flight) return;
        REQUIRE(segment.commit(*in_flight).ok());
        segment.committed(*in_flight);
        in_flight.reset();
      };
      const uint64_t a = append(segment, "a");
      segment.seal();
      flush();
      const uint64_t b = append(segment, "b");
      segment.seal();  // while a's flush may still be committing
      finish();
      const uint64_t c = append(segment, "c");
      segment.seal();  // b's section was never flushed
      flush();
      finish();
      const uint64_t d = append(segment, "d");
      segment.seal();
      flush();
      finish();
      segment.close();
      segment.seal();
      flush();
      finish();
      REQUIRE(segment.finished());
      const uint64_t ma = a - format::kMarkerSize, mb = b - format::kMarkerSize,
                     mc = c - format::kMarkerSize, md = d - format::kMarkerSize;
      const std::vector<std::pair<uint64_t, uint64_t>> expected = {
          {ma, format::kFirstMarkerOffset},  // before any flush
          // Staged: a's flush had not completed when b was sealed.
          {mb, staged ? format::kFirstMarkerOffset : mb},
          {mc, mb},   // a's flush covered everything below b's marker
          {md, md}};  // b and c were flushed before d was sealed
      CHECK(markers_of(dir.file(segment_file_name(kId))) == expected);
    }
  }
}

TEST_CASE("synced marks: a segment too large for 32-bit marker offsets is refused") {
  TempDir dir;
  auto created = MappedSegment::create(
      *posix_file_system(), *real_clock(), dir.path(),
      SegmentFileInfo{kId, uint64_t{1} << 32, format::kFlagSyncedMarks, 0});
  CHECK(created.status().code() == ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace commitlog
