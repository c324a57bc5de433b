// SPDX-License-Identifier: Apache-2.0
// Mapped segments are prepared ahead of the producers (MappedSegment::prepare_ahead):
// the pages they are about to write are made writable on the sync thread, so
// that no producer takes a page fault between reserving an entry and
// publishing it. Speed is the benchmark's business; these tests check where
// the log prepares, and that preparing changes no byte.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "commitlog/commit_log.h"
#include "tests/support/fault_file_system.h"
#include "tests/support/temp_dir.h"

namespace commitlog {
namespace {

using testing::FaultFileSystem;

constexpr uint64_t kStep = 64 << 10;  // preparing goes in whole steps of this

std::unique_ptr<CommitLog> open_batch_log(FaultFileSystem& fs, uint64_t segment_size,
                                          Compression compression) {
  Options options;
  options.directory = "/log";
  options.sync_policy = "batch";
  options.segment_size = segment_size;
  options.compression = compression;
  options.file_system = &fs;
  auto log = CommitLog::open(options);
  REQUIRE_MESSAGE(log.ok(), log.status().to_string());
  return std::move(log).value();
}

TEST_CASE("prepare ahead: the log keeps the pages producers reach prepared, in whole 64 KiB steps") {
  FaultFileSystem fs;
  constexpr uint64_t kSegmentSize = 8 << 20;
  auto log = open_batch_log(fs, kSegmentSize, Compression::kNone);

  const std::string payload(1000, 'p');
  uint64_t last_offset = 0, segment = 0;
  for (int i = 0; i < 2000; ++i) {  // about 2 MiB, each append durable before the next
    auto at = log->append(1, payload);
    REQUIRE_MESSAGE(at.ok(), at.status().to_string());
    if (i == 0) segment = at->segment;
    REQUIRE(at->segment == segment);  // one segment
    last_offset = at->offset;
  }
  REQUIRE(log->close().ok());

  // The calls for the segment written (the allocator creates the next one ahead).
  std::vector<FaultFileSystem::Prefault> calls = fs.prefaults();
  REQUIRE(!calls.empty());
  const std::string path = calls.front().path;
  std::erase_if(calls, [&](const auto& c) { return c.path != path; });
  // The first, on the allocator thread, before any producer could write.
  CHECK(calls.front().offset == 0);
  CHECK(calls.front().length == 4 * kStep);
  // The rest follow on without gaps or overlaps (one producer never outruns
  // them), each ending on a whole step, and together cover every page the
  // producers wrote.
  uint64_t prepared_to = calls.front().length;
  for (size_t i = 1; i < calls.size(); ++i) {
    CHECK(calls[i].offset == prepared_to);
    CHECK(calls[i].length > 0);
    CHECK((calls[i].offset + calls[i].length) % kStep == 0);
    prepared_to = calls[i].offset + calls[i].length;
  }
  CHECK(prepared_to > last_offset + payload.size());
  CHECK(prepared_to <= kSegmentSize);
  // Renewed once half is used, not after every flush: far fewer calls than the
  // 2,000 flushes of this run.
  CHECK(calls.size() < 100);
}

TEST_CASE("prepare ahead: compressed segments, whose image is plain memory, are never prepared") {
  FaultFileSystem fs;
  auto log = open_batch_log(fs, 1 << 20, Compression::kLz4);
  for (int i = 0; i < 300; ++i) REQUIRE(log->append(1, std::string(1000, 'c')).ok());
  REQUIRE(log->close().ok());
  CHECK(fs.prefaults().empty());
}

TEST_CASE("prepare ahead: preparing a mapped file changes none of its bytes, written or not") {
  testing::TempDir dir;
  FileSystem& fs = *posix_file_system();
  auto file = fs.open(dir.path() + "/f", OpenMode::kCreateNew);
  REQUIRE(file.ok());
  constexpr uint64_t kSize = 1 << 20;
  REQUIRE((*file)->allocate(0, kSize).ok());
  auto map = (*file)->map(kSize);
  REQUIRE(map.ok());
  std::byte* base = *map;
  for (uint64_t i = 0; i < 6000; ++i) base[i] = static_cast<std::byte>(i % 251 + 1);

  (*file)->prefault_mapped(0, kSize);     // over written bytes and zeros alike
  (*file)->prefault_mapped(100, 5000);    // ranges that start and end inside pages
  (*file)->prefault_mapped(kSize - 10, 1 << 20);  // past the mapping's end: clipped
  for (uint64_t i = 0; i < 6000; ++i) REQUIRE(base[i] == static_cast<std::byte>(i % 251 + 1));
  CHECK(std::all_of(base + 6000, base + kSize, [](std::byte b) { return b == std::byte{0}; }));
  REQUIRE((*file)->sync_mapped(0, kSize).ok());
  std::vector<std::byte> on_disk(kSize);
  auto read = (*file)->read_at(0, on_disk);
  REQUIRE(read.ok());
  REQUIRE(*read == kSize);
  CHECK(std::memcmp(on_disk.data(), base, kSize) == 0);
}

}  // namespace
}  // namespace commitlog
