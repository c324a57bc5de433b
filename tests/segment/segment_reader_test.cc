// SPDX-License-Identifier: Apache-2.0
// The segment reader driven from bytes: segments built through the codec
// (tests/support/segment_bytes.h), damaged by hand, one case per test.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "segment/format.h"
#include "tests/support/segment_bytes.h"

namespace commitlog {
namespace {

using testing::fill;
using testing::flip_bit;
using testing::read_segment;
using testing::SegmentBuilder;

using Strings = std::vector<std::string>;

// Three sections of two entries each: m0 m1 | m2 m3 | m4 m5.
SegmentBuilder three_sections(uint16_t flags = format::kFlagSyncedMarks, uint16_t version = format::kFormatVersion) {
  SegmentBuilder b(1000, 4096, flags, 0, version);
  b.section({"m0", "m1"});
  b.section({"m2", "m3"});
  b.section({"m4", "m5"});
  return b;
}

uint64_t marker_of_entry(const SegmentBuilder& b, size_t entry) {
  return b.entries()[entry] - format::kMarkerSize;
}

TEST_CASE("reader: an intact segment of a crashed log yields its entries, then the end of data") {
  const auto r = read_segment(three_sections().plain());
  CHECK(r.payloads == Strings{"m0", "m1", "m2", "m3", "m4", "m5"});
  CHECK(r.damage.empty());
  CHECK(r.end.kind == EndKind::kEndOfData);
  CHECK(r.end.sections == 3);
}

TEST_CASE("reader: a closed segment ends at its end marker") {
  SegmentBuilder b = three_sections();
  b.close();
  const auto r = read_segment(b.plain());
  CHECK(r.payloads.size() == 6);
  CHECK(r.damage.empty());
  CHECK(r.end.kind == EndKind::kClosed);
  CHECK(r.end.offset == b.open_marker());
}

TEST_CASE("reader: a bad payload checksum passes over exactly that entry and reads on") {
  const SegmentBuilder b = three_sections();
  auto bytes = b.plain();
  flip_bit(bytes, b.entries()[2] + format::kEntryHeaderSize);
  const auto r = read_segment(bytes);
  CHECK(r.payloads == Strings{"m0", "m1", "m3", "m4", "m5"});
  REQUIRE(r.damage.size() == 1);
  CHECK(r.damage[0].kind == DamageKind::kBadPayloadChecksum);
  CHECK(r.damage[0].offset == b.entries()[2]);
  CHECK(r.damage[0].length == b.entries()[3] - b.entries()[2]);
  CHECK(r.damage[0].durable);  // the third marker records a flush past it
}

TEST_CASE("reader: a bad entry header passes over the rest of its section, to the next marker") {
  const SegmentBuilder b = three_sections();
  auto bytes = b.plain();
  flip_bit(bytes, b.entries()[2] + format::kEntryTableOffset);
  const auto r = read_segment(bytes);
  CHECK(r.payloads == Strings{"m0", "m1", "m4", "m5"});
  REQUIRE(r.damage.size() == 1);
  CHECK(r.damage[0].kind == DamageKind::kBadEntryHeader);
  CHECK(r.damage[0].offset == b.entries()[2]);
  CHECK(r.damage[0].length == marker_of_entry(b, 4) - b.entries()[2]);
}

TEST_CASE("reader: a bad marker resumes at the next valid marker") {
  const SegmentBuilder b = three_sections();
  auto bytes = b.plain();
  const uint64_t second = marker_of_entry(b, 2);
  flip_bit(bytes, second + 9);
  const auto r = read_segment(bytes);
  CHECK(r.payloads == Strings{"m0", "m1", "m4", "m5"});
  REQUIRE(r.damage.size() == 1);
  CHECK(r.damage[0].kind == DamageKind::kBadMarker);
  CHECK(r.damage[0].offset == second);
  CHECK(r.damage[0].length == marker_of_entry(b, 4) - second);
  CHECK(r.damage[0].durable);
}

TEST_CASE("reader: damage no later marker records as flushed is not durable") {
  // The third marker records only the first section as flushed: the second
  // was sealed and not flushed (periodic), so a power loss may have torn it.
  SegmentBuilder b(1000, 4096);
  b.section({"m0", "m1"});
  const uint64_t second = b.section({"m2", "m3"});
  b.section({"m4", "m5"}, second);
  auto bytes = b.plain();
  flip_bit(bytes, b.entries()[2] + format::kEntryHeaderSize);
  const auto r = read_segment(bytes);
  REQUIRE(r.damage.size() == 1);
  CHECK_FALSE(r.damage[0].durable);
}

TEST_CASE("reader: a zeroed marker with valid sections after it is durable damage, not the end of data") {
  SegmentBuilder b = three_sections();
  b.close();
  auto bytes = b.plain();
  const uint64_t second = marker_of_entry(b, 2);
  fill(bytes, second, format::kMarkerSize);
  const auto r = read_segment(bytes);
  CHECK(r.payloads == Strings{"m0", "m1", "m4", "m5"});
  REQUIRE(r.damage.size() == 1);
  CHECK(r.damage[0].kind == DamageKind::kZeroedMarker);
  CHECK(r.damage[0].offset == second);
  CHECK(r.damage[0].durable);
  CHECK(r.end.kind == EndKind::kClosed);
}

TEST_CASE("reader: zeros from inside the last section to the end read as a torn section, not durable") {
  // The ambiguous case: a power loss during the last section's flush leaves
  // exactly this, so no reader can call it loss.
  const SegmentBuilder b = three_sections();
  auto bytes = b.plain();
  fill(bytes, b.entries()[4], bytes.size() - b.entries()[4]);
  const auto r = read_segment(bytes);
  CHECK(r.payloads == Strings{"m0", "m1", "m2", "m3"});
  REQUIRE(r.damage.size() == 1);
  CHECK_FALSE(r.damage[0].durable);
  CHECK(r.end.kind == EndKind::kEndOfData);
}

TEST_CASE("reader: version 2: non-zero bytes after the last marker are one region, to their last byte") {
  const SegmentBuilder b = three_sections(format::kFlagSyncedMarks, 2);
  auto bytes = b.plain();
  const uint64_t end = b.open_marker();
  fill(bytes, end + format::kMarkerSize, 100, std::byte{0x5a});
  const auto r = read_segment(bytes);
  CHECK(r.payloads.size() == 6);
  REQUIRE(r.damage.size() == 1);
  CHECK(r.damage[0].kind == DamageKind::kUnsealedBytes);
  CHECK(r.damage[0].offset == end);
  CHECK(r.damage[0].length == format::kMarkerSize + 100);
  CHECK_FALSE(r.damage[0].durable);
  CHECK(r.end.kind == EndKind::kTorn);
}

// A recycled file (format version 3) holds an earlier segment's bytes after
// the data: nothing of this segment validates there.
TEST_CASE("reader: an earlier segment's bytes after the last marker end the data, neither entries nor damage") {
  const SegmentBuilder b = three_sections();
  SegmentBuilder earlier(999, 4096);
  for (int i = 0; i < 40; ++i) earlier.section({"old-" + std::to_string(i)});
  auto bytes = b.plain();
  const auto stale = earlier.plain();
  const uint64_t from = b.open_marker() + format::kMarkerSize;
  std::copy(stale.begin() + static_cast<long>(from), stale.end(), bytes.begin() + static_cast<long>(from));
  const auto r = read_segment(bytes);
  CHECK(r.payloads == Strings{"m0", "m1", "m2", "m3", "m4", "m5"});
  CHECK(r.damage.empty());
  CHECK(r.end.kind == EndKind::kEndOfData);
  CHECK(r.end.offset == b.open_marker());
}

TEST_CASE("reader: an entry of this segment after the last marker is unsealed bytes, to the last non-zero byte") {
  const SegmentBuilder b = three_sections();
  auto bytes = b.plain();
  const uint64_t end = b.open_marker();
  const uint64_t entry = end + format::kMarkerSize;
  fill(bytes, entry, 100, std::byte{0x5a});
  encode_entry_header(bytes.data() + entry, {100, 7, 1, 0}, 1000, entry);
  const auto r = read_segment(bytes);
  CHECK(r.payloads.size() == 6);
  REQUIRE(r.damage.size() == 1);
  CHECK(r.damage[0].kind == DamageKind::kUnsealedBytes);
  CHECK(r.damage[0].offset == end);
  CHECK(r.damage[0].length == format::kMarkerSize + 100);
  CHECK_FALSE(r.damage[0].durable);
  CHECK(r.end.kind == EndKind::kTorn);
}

TEST_CASE("reader: a file shorter than its capacity is durable truncation, what precedes the cut is read") {
  const SegmentBuilder b = three_sections();
  auto bytes = b.plain();
  bytes.resize(b.entries()[3] + 10);  // inside m3
  const auto r = read_segment(bytes);
  CHECK(r.payloads == Strings{"m0", "m1", "m2"});
  REQUIRE(r.damage.size() == 1);
  CHECK(r.damage[0].kind == DamageKind::kTruncated);
  CHECK(r.damage[0].offset == b.entries()[3]);
  CHECK(r.damage[0].length == b.capacity() - b.entries()[3]);
  CHECK(r.damage[0].durable);
}

TEST_CASE("reader: a cut past all data is still truncation") {
  const SegmentBuilder b = three_sections();
  auto bytes = b.plain();
  bytes.resize(b.open_marker() + 100);
  const auto r = read_segment(bytes);
  CHECK(r.payloads.size() == 6);
  REQUIRE(r.damage.size() == 1);
  CHECK(r.damage[0].kind == DamageKind::kTruncated);
  CHECK(r.damage[0].offset == bytes.size());
}

TEST_CASE("reader: without synced marks, any later valid marker makes damage durable (Kudu's rule)") {
  const SegmentBuilder b = three_sections(0);
  auto bytes = b.plain();
  flip_bit(bytes, b.entries()[4] + format::kEntryHeaderSize);  // the last section: nothing after it
  flip_bit(bytes, b.entries()[2] + format::kEntryHeaderSize);
  const auto r = read_segment(bytes);
  REQUIRE(r.damage.size() == 2);
  CHECK(r.damage[0].durable);
  CHECK_FALSE(r.damage[1].durable);
}

TEST_CASE("reader: a marker moved to another offset never validates there") {
  const SegmentBuilder b = three_sections();
  auto bytes = b.plain();
  const uint64_t second = marker_of_entry(b, 2), third = marker_of_entry(b, 4);
  std::copy_n(bytes.begin() + static_cast<ptrdiff_t>(third), format::kMarkerSize,
              bytes.begin() + static_cast<ptrdiff_t>(second));
  const auto r = read_segment(bytes);
  REQUIRE_FALSE(r.damage.empty());
  CHECK(r.damage[0].kind == DamageKind::kBadMarker);
  CHECK(r.payloads == Strings{"m0", "m1", "m4", "m5"});
}

TEST_CASE("image: a compressed segment reads as the same entries at the same positions as the plain one") {
  SegmentBuilder b = three_sections();
  b.close();
  const auto plain = read_segment(b.plain());
  const auto compressed = read_segment(b.compressed());
  CHECK(compressed.payloads == plain.payloads);
  CHECK(compressed.positions == plain.positions);
  CHECK(compressed.damage.empty());
  CHECK(compressed.section_damage.empty());
  CHECK(compressed.end.kind == EndKind::kClosed);
}

TEST_CASE("image: a bad stored checksum with a later flush is durable, only that flush is missing") {
  SegmentBuilder b = three_sections();
  b.close();
  std::vector<uint64_t> at;
  auto file = b.compressed(&at);
  flip_bit(file, at[1] + format::kSectionHeaderSize + 1);
  const auto r = read_segment(file);
  CHECK(r.payloads == Strings{"m0", "m1", "m4", "m5"});
  REQUIRE(r.section_damage.size() == 1);
  CHECK(r.section_damage[0].kind == DamageKind::kBadSectionChecksum);
  CHECK(r.section_damage[0].file_offset == at[1]);
  CHECK(r.section_damage[0].file_bytes == at[2] - at[1]);
  CHECK(r.section_damage[0].durable);
  // The reader meets the gap where the lost flush began, in the image.
  REQUIRE(r.damage.size() == 1);
  CHECK(r.damage[0].offset == r.section_damage[0].image_at);
  CHECK(r.damage[0].durable);
}

TEST_CASE("image: a zeroed section header with sections after it is durable damage, not the end of sections") {
  SegmentBuilder b = three_sections();
  b.close();
  std::vector<uint64_t> at;
  auto file = b.compressed(&at);
  fill(file, at[1], format::kSectionHeaderSize);
  const auto r = read_segment(file);
  CHECK(r.payloads == Strings{"m0", "m1", "m4", "m5"});
  REQUIRE(r.section_damage.size() == 1);
  CHECK(r.section_damage[0].kind == DamageKind::kZeroedSectionHeader);
  CHECK(r.section_damage[0].durable);
  CHECK(r.end.kind == EndKind::kClosed);
}

TEST_CASE("image: damage to the last flush is a torn flush, not durable") {
  SegmentBuilder b = three_sections();
  std::vector<uint64_t> at;
  auto file = b.compressed(&at);
  flip_bit(file, at[2] + format::kSectionHeaderSize + 1);
  const auto r = read_segment(file);
  CHECK(r.payloads == Strings{"m0", "m1", "m2", "m3"});
  REQUIRE(r.section_damage.size() == 1);
  CHECK_FALSE(r.section_damage[0].durable);
}

TEST_CASE("image: zeros where the next section header belongs, and only zeros after, end the sections") {
  const auto r = read_segment(three_sections().compressed());
  CHECK(r.payloads.size() == 6);
  CHECK(r.section_damage.empty());
  CHECK(r.damage.empty());
  CHECK(r.end.kind == EndKind::kEndOfData);
}

TEST_CASE("image: a compressed file cut inside an allocation step is truncation, at a step's end it is not") {
  SegmentBuilder b(1000, 64 << 10);
  for (int i = 0; i < 40; ++i) b.section({std::string(700, static_cast<char>('a' + i % 26)) + std::to_string(i)});
  std::vector<uint64_t> at;
  const auto file = b.compressed(&at);
  auto cut = file;
  cut.resize(at.back() + 20);
  const auto r = read_segment(cut);
  REQUIRE_FALSE(r.section_damage.empty());
  CHECK(r.section_damage.back().kind == DamageKind::kTruncated);
  CHECK(r.section_damage.back().durable);
  CHECK(r.payloads.size() == 39);
  // A power loss may undo a whole step: the file then ends where the one before ended.
  cut = file;
  cut.resize(format::kHeaderSize);
  CHECK(read_segment(cut).section_damage.empty());
}

}  // namespace
}  // namespace commitlog
