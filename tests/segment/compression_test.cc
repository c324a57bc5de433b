// SPDX-License-Identifier: Apache-2.0
// LZ4-compressed segments: round trip, positions in uncompressed coordinates,
// and damage to compressed sections.
#include <doctest/doctest.h>

#include <filesystem>
#include <thread>

#include <boost/fiber/all.hpp>
#include <fmt/core.h>

#include "commitlog/commit_log.h"
#include "segment/checksum.h"
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

Options options_for(const std::string& dir, Compression compression, uint64_t segment_size = 64 << 10) {
  Options options;
  options.directory = dir;
  options.sync_policy = "batch";
  options.segment_size = segment_size;
  options.compression = compression;
  return options;
}

// Key/value-like records with some redundancy, as a store would log them.
std::string record(int i) {
  return fmt::format("{{\"key\":\"user:{:08d}\",\"field\":\"balance\",\"value\":{},\"note\":\"{}\"}}", i,
                     i * 37 % 10007, std::string(20 + i % 40, 'n'));
}

// Bytes up to the last non-zero one: files are preallocated ahead of what is written.
uint64_t used_bytes(const std::vector<std::byte>& bytes) {
  uint64_t end = bytes.size();
  while (end > 0 && bytes[end - 1] == std::byte{0}) --end;
  return end;
}

uint64_t directory_bytes(const std::string& dir) {
  uint64_t total = 0;
  for (const auto& f : segment_files(dir)) total += used_bytes(read_file(f.path));
  return total;
}

TEST_CASE("compressed segments replay the same mutations at the same positions as plain ones") {
  TempDir plain_dir, lz4_dir;
  // Positions as (segment ordinal, offset): ids differ between the two logs.
  using Place = std::pair<uint64_t, uint64_t>;
  std::vector<Place> plain_places, lz4_places;
  std::vector<std::string> texts;
  for (int i = 0; i < 2000; ++i) texts.push_back(record(i));
  for (auto [dir, compression, places] : {std::tuple{&plain_dir, Compression::kNone, &plain_places},
                                          std::tuple{&lz4_dir, Compression::kLz4, &lz4_places}}) {
    auto log = CommitLog::open(options_for(dir->path(), compression));
    REQUIRE(log.ok());
    uint64_t first_segment = 0;
    for (int i = 0; i < 2000; i += 50) {  // one section per batch of 50
      std::vector<Mutation> batch;
      for (int j = i; j < i + 50; ++j) batch.push_back({static_cast<uint32_t>(j % 5), std::as_bytes(std::span(texts[j]))});
      auto range = (*log)->append_batch(batch);
      REQUIRE(range.ok());
      if (i == 0) first_segment = range->first.segment;
      places->push_back({range->first.segment - first_segment, range->first.offset});
      places->push_back({range->last.segment - first_segment, range->last.offset});
    }
    REQUIRE((*log)->close().ok());
  }
  CHECK(plain_places == lz4_places);
  auto plain = replay_all(plain_dir.path());
  auto lz4 = replay_all(lz4_dir.path());
  REQUIRE(lz4.report.status.ok());
  CHECK(lz4.payloads == plain.payloads);
  CHECK(lz4.payloads == texts);
  for (size_t i = 0; i < lz4.positions.size(); ++i) {
    CHECK(lz4.positions[i].offset == plain.positions[i].offset);
  }
  // Compressed files hold only what was written, compressed; plain ones are preallocated.
  CHECK(directory_bytes(lz4_dir.path()) < directory_bytes(plain_dir.path()) / 2);
}

TEST_CASE("fibers on threads append to compressed segments with a pool of one buffer") {
  TempDir dir;
  Options options = options_for(dir.path(), Compression::kLz4, 32 << 10);
  options.max_compression_buffers_in_pool = 1;
  options.sync_policy = "group";
  options.policy.group_window = std::chrono::milliseconds(1);
  auto log = CommitLog::open(options);
  REQUIRE(log.ok());
  std::atomic<int> acked{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      std::vector<boost::fibers::fiber> fibers;
      for (int f = 0; f < 100; ++f) {
        fibers.emplace_back([&, t, f] {
          for (int s = 0; s < 10; ++s) {
            if ((*log)->append(1, record(t * 100000 + f * 100 + s)).ok()) ++acked;
          }
        });
      }
      for (auto& fiber : fibers) fiber.join();
    });
  }
  for (auto& t : threads) t.join();
  CHECK((*log)->stats().segment_switches > 0);
  REQUIRE((*log)->close().ok());
  CHECK(acked == 2000);
  auto replayed = replay_all(dir.path());
  REQUIRE(replayed.report.status.ok());
  CHECK(replayed.report.mutations == 2000);
}

// A compressed log of several segments, copied while open (no end marker on the newest).
struct CompressedLog {
  TempDir dir;
  std::vector<std::string> payloads;
  std::string first;
  CompressedLog() {
    TempDir live;
    auto log = CommitLog::open(options_for(live.path(), Compression::kLz4, 16 << 10));
    REQUIRE(log.ok());
    for (int i = 0; i < 400; ++i) {
      payloads.push_back(record(i));
      REQUIRE((*log)->append(1, payloads.back()).ok());
    }
    const uint64_t last = (*log)->stats().durable.segment;
    for (const auto& f : segment_files(live.path())) {
      if (f.id <= last) std::filesystem::copy(f.path, dir.path() + "/" + std::filesystem::path(f.path).filename().string());
    }
    first = segment_files(dir.path()).front().path;
    REQUIRE(segment_files(dir.path()).size() >= 3);
  }
};

void check_compressed_corruption(const std::string& dir, const std::string& kind, size_t total) {
  auto strict = replay_all(dir);
  CHECK(strict.report.status.code() == ErrorCode::kCorruption);
  CHECK_MESSAGE(strict.report.status.message().find(kind) != std::string::npos, strict.report.status.message());
  auto skip = replay_all(dir, RecoveryMode::kSkip);
  CHECK(skip.report.status.ok());
  CHECK(skip.report.mutations < total);
  CHECK(skip.report.mutations > 0);
}

TEST_CASE("damage to compressed sections is detected and never crashes the decoder") {
  SUBCASE("a bit flip in the compressed bytes") {
    CompressedLog log;
    flip_bit(log.first, format::kHeaderSize + format::kSectionHeaderSize + 10, 2);
    check_compressed_corruption(log.dir.path(), "bad compressed section checksum", log.payloads.size());
  }
  SUBCASE("a bit flip in a section header") {
    CompressedLog log;
    flip_bit(log.first, format::kHeaderSize + format::kSectionStoredLength, 0);
    check_compressed_corruption(log.dir.path(), "offset 64: bad compressed section header", log.payloads.size());
  }
  SUBCASE("garbage that passes the stored checksum") {
    CompressedLog log;
    auto bytes = read_file(log.first);
    std::byte* header = bytes.data() + format::kHeaderSize;
    const uint32_t stored = load_u32(header + format::kSectionStoredLength);
    REQUIRE((load_u32(header + format::kSectionFlags) & format::kSectionRaw) == 0);
    for (uint32_t i = 0; i < stored; ++i) header[format::kSectionHeaderSize + i] = std::byte(0xff - i * 7);
    store_u64(header + format::kSectionStoredChecksum, checksum({header + format::kSectionHeaderSize, stored}));
    store_u64(header + format::kSectionHeaderChecksum,
              section_header_checksum(header, load_u64(bytes.data() + format::kHeaderIdOffset), format::kHeaderSize));
    write_file(log.first, bytes);
    check_compressed_corruption(log.dir.path(), "does not decompress", log.payloads.size());
  }
  SUBCASE("a truncated section in an older segment is corruption") {
    CompressedLog log;
    auto bytes = read_file(log.first);
    bytes.resize(used_bytes(bytes) - 30);
    write_file(log.first, bytes);
    auto strict = replay_all(log.dir.path());
    CHECK(strict.report.status.code() == ErrorCode::kCorruption);
  }
  SUBCASE("a truncated newest segment is corruption; strict replay delivers every section before the cut") {
    // The file grows in whole allocation steps: a power loss cannot cut it
    // inside one (format::kCompressedAllocationStep).
    CompressedLog log;
    const std::string newest = segment_files(log.dir.path()).back().path;
    auto bytes = read_file(newest);
    bytes.resize(used_bytes(bytes) - 5);
    write_file(newest, bytes);
    auto replayed = replay_all(log.dir.path());
    CHECK(replayed.report.status.code() == ErrorCode::kCorruption);
    CHECK(replayed.report.status.message().find("file truncated") != std::string::npos);
    CHECK(replayed.payloads == std::vector<std::string>(log.payloads.begin(), log.payloads.end() - 1));
  }
}

}  // namespace
}  // namespace commitlog
