// SPDX-License-Identifier: Apache-2.0
// Recycled segments (commitlog/lifecycle/spare_segments.h): in standard and
// direct modes a discarded segment becomes a spare file that a later segment
// is written over; never one another name still holds; at most
// SpareSegments::kMaxSpares, within the soft limit; and an idle open and
// close leaves no segment behind while the next ids stay above it.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "commitlog/commit_log.h"
#include "commitlog/replayer.h"
#include "commitlog/lifecycle/spare_segments.h"
#include "segment/codec.h"
#include "segment/file_name.h"
#include "tests/support/eventually.h"
#include "tests/support/fault_file_system.h"
#include "tests/support/log_files.h"

namespace commitlog::recycling_test {
namespace {

using testing::eventually;
using testing::FaultFileSystem;
using testing::kLogDir;

constexpr uint64_t kSegmentSize = 64 << 10;
const std::string kPayload(1000, 'r');  // about 60 entries per segment

Options log_options(FaultFileSystem& fs, DiskAccessMode mode, Compression compression = Compression::kNone) {
  Options o = testing::batch_options(kLogDir, kSegmentSize, compression, 0);
  o.file_system = &fs;
  o.disk_access_mode = mode;
  return o;
}

std::vector<SegmentFile> segments(FaultFileSystem& fs) {
  auto listed = list_segment_files(fs, kLogDir);
  REQUIRE(listed.ok());
  return *listed;
}

std::vector<std::string> names_ending(FaultFileSystem& fs, const std::string& suffix) {
  std::vector<std::string> out;
  auto names = fs.list(kLogDir);
  REQUIRE(names.ok());
  for (const std::string& n : *names) {
    if (n.ends_with(suffix)) out.push_back(n);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Appends `segments` segments' worth to table 1, discarding it up to each
// append that lands in a new segment; returns every position appended.
std::vector<Position> append_discarding(CommitLog& log, uint64_t segments) {
  std::vector<Position> positions;
  uint64_t first = 0;
  while (positions.empty() || positions.back().segment < first + segments) {
    auto at = log.append(1, kPayload);
    REQUIRE(at.ok());
    if (positions.empty()) first = at->segment;
    if (!positions.empty() && at->segment > positions.back().segment) REQUIRE(log.discard(1, *at).ok());
    positions.push_back(*at);
  }
  return positions;
}

TEST_CASE("recycling: standard and direct logs write later segments over discarded ones, and replay only new data") {
  for (DiskAccessMode mode : {DiskAccessMode::kStandard, DiskAccessMode::kDirect}) {
    CAPTURE(static_cast<int>(mode));
    FaultFileSystem fs;
    auto log = CommitLog::open(log_options(fs, mode));
    REQUIRE(log.ok());
    const std::vector<Position> positions = append_discarding(**log, 12);
    CHECK(eventually([&] { return (*log)->metrics().segments_recycled >= 4; }));
    // The directory holds the active segment, the one prepared ahead, at
    // most one not yet discarded, and the spares: never the twelve written.
    // Discards run on the lifecycle's thread, which a loaded machine delays.
    CHECK(eventually([&] { return segments(fs).size() <= 3; }));
    CHECK(names_ending(fs, ".spare").size() <= SpareSegments::kMaxSpares);
    const Position last = positions.back();
    REQUIRE((*log)->close().ok());
    const auto replayed = testing::replay_all(fs, kLogDir);
    REQUIRE(replayed.report.status.ok());
    CHECK(replayed.report.problems.empty());
    REQUIRE_FALSE(replayed.positions.empty());
    CHECK(replayed.positions.back() == last);
    // Only the undiscarded tail, in order, none of the recycled files' old entries.
    for (size_t i = 0; i < replayed.positions.size(); ++i) {
      CHECK(replayed.positions[i] == positions[positions.size() - replayed.positions.size() + i]);
    }
  }
}

TEST_CASE("recycling: a segment another name holds (a CDC or archive link) is deleted, never reused") {
  FaultFileSystem fs;
  REQUIRE(fs.create_dirs("/db/linked").ok());
  auto log = CommitLog::open(log_options(fs, DiskAccessMode::kDirect));
  REQUIRE(log.ok());
  auto first = (*log)->append(1, kPayload);
  REQUIRE(first.ok());
  const std::string path = std::string(kLogDir) + "/" + segment_file_name(first->segment);
  REQUIRE(fs.link(path, "/db/linked/held.log").ok());
  append_discarding(**log, 3);
  CHECK(eventually([&] { return !fs.exists(path); }));
  CHECK_FALSE(fs.exists(std::string(kLogDir) + "/" + spare_file_name(first->segment)));
  REQUIRE((*log)->close().ok());
  // The other name still reads as the segment it was.
  auto held = read_whole_file(fs, "/db/linked/held.log");
  REQUIRE(held.ok());
  SegmentHeader header;
  REQUIRE(decode_segment_header(*held, &header) == HeaderProblem::kNone);
  CHECK(header.id == first->segment);
}

TEST_CASE("recycling: files named like spares that do not begin as segments are left alone") {
  for (DiskAccessMode mode : {DiskAccessMode::kMmap, DiskAccessMode::kStandard}) {
    CAPTURE(static_cast<int>(mode));
    FaultFileSystem fs;
    REQUIRE(fs.create_dirs(kLogDir).ok());
    // Someone's notes, and a file of a spare's size holding other bytes.
    const std::string notes = std::string(kLogDir) + "/" + spare_file_name(7);
    const std::string sized = std::string(kLogDir) + "/" + spare_file_name(8);
    const std::string text = "precious notes";
    std::vector<std::byte> junk(kSegmentSize, std::byte{'j'});
    for (const auto& [path, bytes] : {std::pair{notes, std::vector<std::byte>(reinterpret_cast<const std::byte*>(text.data()),
                                                                                 reinterpret_cast<const std::byte*>(text.data()) + text.size())},
                                      std::pair{sized, junk}}) {
      auto file = fs.open(path, OpenMode::kCreateNew);
      REQUIRE(file.ok());
      REQUIRE((*file)->write_at(0, bytes).ok());
    }
    for (int run = 0; run < 2; ++run) {  // opened over them, recycling, then closed and opened again
      auto log = CommitLog::open(log_options(fs, mode));
      REQUIRE(log.ok());
      append_discarding(**log, 3);
      REQUIRE((*log)->close().ok());
    }
    auto kept_notes = read_whole_file(fs, notes);
    auto kept_junk = read_whole_file(fs, sized);
    REQUIRE(kept_notes.ok());
    REQUIRE(kept_junk.ok());
    CHECK(std::string(reinterpret_cast<const char*>(kept_notes->data()), kept_notes->size()) == text);
    CHECK(*kept_junk == junk);
  }
}

TEST_CASE("recycling: mmap and LZ4 logs delete discarded segments") {
  for (bool lz4 : {false, true}) {
    CAPTURE(lz4);
    FaultFileSystem fs;
    auto log = CommitLog::open(log_options(fs, lz4 ? DiskAccessMode::kStandard : DiskAccessMode::kMmap,
                                           lz4 ? Compression::kLz4 : Compression::kNone));
    REQUIRE(log.ok());
    append_discarding(**log, 5);
    CHECK(eventually([&] { return (*log)->metrics().segments_deleted >= 2; }));
    CHECK((*log)->metrics().segments_recycled == 0);
    CHECK(names_ending(fs, ".spare").empty());
    REQUIRE((*log)->close().ok());
  }
}

TEST_CASE("recycling: the pool keeps at most four spares, and none over the soft limit") {
  for (bool limited : {false, true}) {
    CAPTURE(limited);
    FaultFileSystem fs;
    Options o = log_options(fs, DiskAccessMode::kStandard);
    if (limited) o.total_space = 4 * kSegmentSize;
    auto log = CommitLog::open(o);
    REQUIRE(log.ok());
    Position last;
    for (uint64_t n = 0; n < 10 * 60; ++n) {
      auto at = (*log)->append(1, kPayload);
      REQUIRE(at.ok());
      last = *at;
    }
    REQUIRE((*log)->discard(1, last).ok());  // nine or so segments clean at once
    CHECK(eventually([&] { return (*log)->metrics().segments_deleted + (*log)->metrics().segments_recycled >= 8; }));
    const MetricsSnapshot m = (*log)->metrics();
    CHECK(m.spare_segments == names_ending(fs, ".spare").size());
    CHECK(m.spare_segments <= SpareSegments::kMaxSpares);
    CHECK(m.segments_deleted > 0);
    if (limited) CHECK(m.total_log_bytes <= o.total_space);
    REQUIRE((*log)->close().ok());
  }
}

TEST_CASE("recycling: an idle open and close leaves no segment, and the next log's ids stay above it") {
  for (DiskAccessMode mode : {DiskAccessMode::kMmap, DiskAccessMode::kStandard, DiskAccessMode::kDirect}) {
    CAPTURE(static_cast<int>(mode));
    FaultFileSystem fs;
    REQUIRE(CommitLog::open(log_options(fs, mode)).ok());  // opened and closed at once
    CHECK(segments(fs).empty());
    const std::vector<std::string> spares = names_ending(fs, ".spare");
    REQUIRE_FALSE(spares.empty());
    const uint64_t parked = *parse_spare_file_name(spares.back());
    auto log = CommitLog::open(log_options(fs, mode));
    REQUIRE(log.ok());
    auto at = (*log)->append(1, kPayload);
    REQUIRE(at.ok());
    CHECK(at->segment > parked);
    // A mode that reuses no spare removes them once its first segment is made.
    if (mode == DiskAccessMode::kMmap) CHECK(names_ending(fs, ".spare").empty());
    REQUIRE((*log)->close().ok());
    CHECK(segments(fs).size() == 1);
  }
}

}  // namespace
}  // namespace commitlog::recycling_test
