// SPDX-License-Identifier: Apache-2.0
// Large mutations on the direct route (commitlog_ext_direct_write_threshold):
// plain segments take the payload with one pwrite, compressed ones as a
// section the producer compressed. Replay must hand back the same bytes at
// the same positions as the pooled route, and a torn flush group must read
// as a torn tail, never as corruption.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <random>
#include <thread>

#include "commitlog/commit_log.h"
#include "commitlog/config.h"
#include "segment/checksum.h"
#include "segment/format.h"
#include "tests/support/eventually.h"
#include "tests/support/fault_file_system.h"
#include "tests/support/log_files.h"
#include "tests/support/temp_dir.h"

namespace commitlog {
namespace {

using testing::FaultFileSystem;
using testing::Op;
using testing::read_file;
using testing::replay_all;
using testing::segment_files;
using testing::TempDir;
using testing::write_file;

constexpr uint64_t kThreshold = 4096;

Options direct_options(const std::string& dir, Compression compression,
                       DiskAccessMode mode = DiskAccessMode::kLegacy) {
  Options o = testing::batch_options(dir, 1 << 20, compression, kThreshold);
  o.disk_access_mode = mode;
  return o;
}

// The modes whose direct route differs: mmap's pwrite (legacy, plain),
// standard's and direct's producer writes, and the compressed sections.
constexpr DiskAccessMode kModes[] = {DiskAccessMode::kLegacy, DiskAccessMode::kStandard, DiskAccessMode::kDirect};

// Direct I/O writes only the whole blocks inside a payload, and only while
// a flush is running: a payload may be copied instead.
void check_direct_writes(uint64_t counted, uint64_t large, DiskAccessMode mode) {
  if (mode == DiskAccessMode::kDirect) {
    CHECK(counted <= large);
  } else {
    CHECK(counted == large);
  }
}

// Every third payload random (LZ4 cannot shrink it: stored raw), the others
// compressible text; sizes on both sides of the threshold.
std::string large_payload(int i) {
  const size_t size = i % 4 == 0 ? 100 + static_cast<size_t>(i)
                                 : kThreshold - 8 + static_cast<size_t>(i) * 997 % 60000;
  std::string p(size, ' ');
  std::mt19937_64 rng(static_cast<uint64_t>(i));
  for (size_t j = 0; j < size; ++j) {
    p[j] = i % 3 == 0 ? static_cast<char>(rng())
                      : static_cast<char>('a' + (j / 64 + static_cast<size_t>(i)) % 26);
  }
  return p;
}

uint64_t large_count(const std::vector<std::string>& payloads) {
  return static_cast<uint64_t>(
      std::count_if(payloads.begin(), payloads.end(),
                    [](const std::string& p) { return p.size() >= kThreshold; }));
}

struct Section {
  uint64_t at = 0;
  uint32_t image_length = 0;
  uint32_t stored_length = 0;
  uint32_t flags = 0;
};

// The section headers of a compressed segment file, in file order.
std::vector<Section> sections_of(const std::vector<std::byte>& bytes) {
  std::vector<Section> out;
  for (uint64_t at = format::kHeaderSize; at + format::kSectionHeaderSize <= bytes.size();) {
    const std::byte* h = bytes.data() + at;
    if (load_u64(h + format::kSectionHeaderChecksum) == 0) break;
    Section s{at, load_u32(h + format::kSectionImageLength),
              load_u32(h + format::kSectionStoredLength), load_u32(h + format::kSectionFlags)};
    out.push_back(s);
    at = format::align_up(at + format::kSectionHeaderSize + s.stored_length);
  }
  return out;
}

TEST_CASE(
    "direct writes: two threads of large and small mutations replay byte-exact, plain and LZ4, in each mode") {
  for (Compression compression : {Compression::kNone, Compression::kLz4})
  for (DiskAccessMode mode : kModes) {
    const bool lz4 = compression == Compression::kLz4;
    CAPTURE(lz4);
    CAPTURE(static_cast<int>(mode));
    TempDir dir;
    Options options = direct_options(dir.path(), compression, mode);
    options.sync_policy = "group";
    options.policy.group_window = std::chrono::milliseconds(1);
    auto log = CommitLog::open(options);
    REQUIRE(log.ok());
    constexpr int kPerThread = 150;
    std::atomic<int> failed{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 2; ++t) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < kPerThread; ++i) {
          const std::string p = large_payload(t * kPerThread + i);
          if (!(*log)->append(static_cast<uint32_t>(t), std::as_bytes(std::span(p))).ok()) ++failed;
        }
      });
    }
    for (auto& t : threads) t.join();
    REQUIRE(failed == 0);
    const MetricsSnapshot metrics = (*log)->metrics();
    REQUIRE((*log)->close().ok());

    std::vector<std::string> expected[2];
    for (int t = 0; t < 2; ++t) {
      for (int i = 0; i < kPerThread; ++i) expected[t].push_back(large_payload(t * kPerThread + i));
    }
    check_direct_writes(metrics.direct_writes, large_count(expected[0]) + large_count(expected[1]),
                        lz4 ? DiskAccessMode::kLegacy : mode);
    if (mode != DiskAccessMode::kDirect) CHECK(metrics.direct_writes > 100);
    const auto replayed = replay_all(dir.path());
    REQUIRE_MESSAGE(replayed.report.status.ok(), replayed.report.status.to_string());
    std::vector<std::string> got[2];
    for (size_t i = 0; i < replayed.payloads.size(); ++i)
      got[replayed.tables[i]].push_back(replayed.payloads[i]);
    CHECK(got[0] == expected[0]);
    CHECK(got[1] == expected[1]);
    CHECK(segment_files(dir.path()).size() > 2);
  }
}

TEST_CASE("direct writes: the same positions and bytes as the pooled route, in each mode") {
  for (Compression compression : {Compression::kNone, Compression::kLz4})
  for (DiskAccessMode mode : kModes) {
    CAPTURE(static_cast<int>(mode));
    TempDir pooled_dir, direct_dir;
    std::vector<Position> positions[2];
    std::vector<std::string> payloads;
    for (int i = 0; i < 60; ++i) payloads.push_back(large_payload(i));
    for (int route = 0; route < 2; ++route) {
      Options options =
          direct_options(route == 0 ? pooled_dir.path() : direct_dir.path(), compression, mode);
      if (route == 0) options.direct_write_threshold = 0;
      auto log = CommitLog::open(options);
      REQUIRE(log.ok());
      for (const std::string& p : payloads) {
        auto at = (*log)->append(1, std::as_bytes(std::span(p)));
        REQUIRE(at.ok());
        positions[route].push_back(*at);
      }
      check_direct_writes((*log)->metrics().direct_writes, route == 0 ? 0 : large_count(payloads),
                          compression == Compression::kLz4 ? DiskAccessMode::kLegacy : mode);
      REQUIRE((*log)->close().ok());
    }
    for (size_t i = 0; i < positions[0].size(); ++i)
      CHECK(positions[0][i].offset == positions[1][i].offset);
    const auto pooled = replay_all(pooled_dir.path());
    const auto direct = replay_all(direct_dir.path());
    REQUIRE(direct.report.status.ok());
    CHECK(direct.payloads == pooled.payloads);
    CHECK(direct.payloads == payloads);
    if (compression == Compression::kLz4) {
      // Each flush of a direct payload is a group: range, payload, range.
      const auto bytes = read_file(segment_files(direct_dir.path()).front().path);
      CHECK((load_u16(bytes.data() + format::kHeaderFlagsOffset) & format::kFlagFlushGroups) != 0);
      size_t joined = 0;
      for (const Section& s : sections_of(bytes))
        joined += (s.flags & format::kSectionJoined) != 0 ? 1 : 0;
      CHECK(joined > 10);
      const auto pooled_bytes = read_file(segment_files(pooled_dir.path()).front().path);
      CHECK((load_u16(pooled_bytes.data() + format::kHeaderFlagsOffset) &
             format::kFlagFlushGroups) == 0);
    }
  }
}

TEST_CASE(
    "direct writes: a plain segment takes each large payload with one pwrite, never below the "
    "threshold") {
  FaultFileSystem fs;
  Options options = direct_options("/db/log", Compression::kNone);
  options.file_system = &fs;
  auto log = CommitLog::open(options);
  REQUIRE(log.ok());
  // Once the segment after the active one is made, each with its header's
  // one pwrite, no other segment is made here.
  REQUIRE(testing::eventually([&] { return fs.calls(Op::kSyncDir) >= 2; }));
  const uint64_t header_writes = fs.calls(Op::kWrite);
  CHECK(header_writes == 2);
  const std::string small(kThreshold - 1, 's'), large(kThreshold, 'L');
  for (int i = 0; i < 10; ++i) REQUIRE((*log)->append(1, std::as_bytes(std::span(small))).ok());
  CHECK(fs.calls(Op::kWrite) == header_writes);
  for (int i = 0; i < 10; ++i) REQUIRE((*log)->append(1, std::as_bytes(std::span(large))).ok());
  CHECK(fs.calls(Op::kWrite) == header_writes + 10);
  CHECK(fs.calls(Op::kSync) == 0);  // msync alone makes them durable
  CHECK((*log)->metrics().direct_writes == 10);
  fs.pull_plug();
  log->reset();
  auto crashed = fs.crash(testing::CrashMode::kDrop, 1);
  ReplayOptions replay;
  replay.file_system = crashed.get();
  std::vector<std::string> got;
  const ReplayReport report = replay_directory("/db/log", replay, [&](const ReplayedMutation& m) {
    got.emplace_back(reinterpret_cast<const char*>(m.payload.data()), m.payload.size());
    return Status{};
  });
  REQUIRE(report.status.ok());
  REQUIRE(got.size() == 20);
  CHECK(got[9] == small);
  CHECK(got[19] == large);
}

TEST_CASE("direct writes with direct I/O: a producer writes its blocks while a flush runs, else the flush does") {
  FaultFileSystem fs;
  Options options = direct_options("/db/log", Compression::kNone, DiskAccessMode::kDirect);
  options.file_system = &fs;
  auto log = CommitLog::open(options);
  REQUIRE(log.ok());
  // The allocator's next segment made: the sync held below is the flush's.
  REQUIRE(testing::eventually([&] { return fs.calls(Op::kSyncDir) >= 2; }));
  const std::string first(3 * kThreshold, 'A'), second(3 * kThreshold, 'B');
  fs.hold(Op::kSync);
  std::thread alone([&] { CHECK((*log)->append(1, std::as_bytes(std::span(first))).ok()); });
  REQUIRE(fs.await_held(Op::kSync));
  CHECK((*log)->metrics().direct_writes == 0);  // no flush ran: the flush wrote it, in one request
  std::thread beside([&] { CHECK((*log)->append(1, std::as_bytes(std::span(second))).ok()); });
  // Its blocks go while the first flush's commit runs.
  CHECK(testing::eventually([&] { return (*log)->metrics().direct_writes == 1; }, std::chrono::seconds(10)));
  fs.release(Op::kSync);
  alone.join();
  beside.join();
  REQUIRE((*log)->close().ok());
  ReplayOptions replay;
  replay.file_system = &fs;
  std::vector<std::string> got;
  const ReplayReport report = replay_directory("/db/log", replay, [&](const ReplayedMutation& m) {
    got.emplace_back(reinterpret_cast<const char*>(m.payload.data()), m.payload.size());
    return Status{};
  });
  REQUIRE(report.status.ok());
  CHECK(got == std::vector<std::string>{first, second});
}

TEST_CASE("direct writes: a failed pwrite falls back to the copy and loses nothing") {
  FaultFileSystem fs;
  Options options = direct_options("/db/log", Compression::kNone);
  options.file_system = &fs;
  auto log = CommitLog::open(options);
  REQUIRE(log.ok());
  // Once the segments' headers are written (the active one and the next).
  REQUIRE(testing::eventually([&] { return fs.calls(Op::kSyncDir) >= 2; }));
  fs.inject(Op::kWrite, EIO);
  const std::string large(3 * kThreshold, 'L');
  for (int i = 0; i < 5; ++i) REQUIRE((*log)->append(1, std::as_bytes(std::span(large))).ok());
  CHECK(fs.failures(Op::kWrite) == 5);
  CHECK((*log)->metrics().direct_writes == 0);
  REQUIRE((*log)->close().ok());
  fs.clear_faults();
  ReplayOptions replay;
  replay.file_system = &fs;
  uint64_t n = 0;
  const ReplayReport report = replay_directory("/db/log", replay, [&](const ReplayedMutation& m) {
    n += m.payload.size() == large.size() ? 1 : 0;
    return Status{};
  });
  CHECK(report.status.ok());
  CHECK(n == 5);
}

// A compressed log whose every flush (batch policy, one producer) is one
// direct payload's group, copied while open: its last group ends the file.
struct GroupedLog {
  TempDir dir;
  std::vector<std::string> payloads;
  std::string file;
  GroupedLog() {
    TempDir live;
    auto log = CommitLog::open(direct_options(live.path(), Compression::kLz4));
    REQUIRE(log.ok());
    for (int i = 1; i <= 6; ++i) {
      payloads.push_back(
          std::string(kThreshold * static_cast<size_t>(i), static_cast<char>('a' + i)));
      REQUIRE((*log)->append(1, std::as_bytes(std::span(payloads.back()))).ok());
    }
    REQUIRE(segment_files(live.path()).size() >= 1);
    const std::string from = segment_files(live.path()).front().path;
    file = dir.path() + "/" + std::filesystem::path(from).filename().string();
    std::filesystem::copy(from, file);
  }
  // The sections of the direct payloads, in file order.
  std::vector<Section> direct_sections() const {
    std::vector<Section> out;
    for (const Section& s : sections_of(read_file(file))) {
      if ((s.flags & format::kSectionJoined) != 0 && (s.flags & format::kSectionMore) != 0)
        out.push_back(s);
    }
    return out;
  }
};

TEST_CASE("direct writes: damage to a flush group is a torn tail when last, corruption when not") {
  SUBCASE("the last group's payload section damaged: torn, the group left out whole") {
    GroupedLog log;
    const auto direct = log.direct_sections();
    REQUIRE(direct.size() == log.payloads.size());
    testing::flip_bit(log.file, direct.back().at + format::kSectionHeaderSize + 3);
    const auto replayed = replay_all(log.dir.path());
    REQUIRE_MESSAGE(replayed.report.status.ok(), replayed.report.status.to_string());
    CHECK(replayed.report.torn_tail_bytes > 0);
    CHECK(replayed.payloads ==
          std::vector<std::string>(log.payloads.begin(), log.payloads.end() - 1));
  }
  SUBCASE("the last group cut short (its last section zeroed): torn") {
    GroupedLog log;
    auto bytes = read_file(log.file);
    const Section last = sections_of(bytes).back();
    REQUIRE((last.flags & format::kSectionJoined) != 0);
    std::fill_n(bytes.begin() + static_cast<ptrdiff_t>(last.at), format::kSectionHeaderSize,
                std::byte{0});
    write_file(log.file, bytes);
    const auto replayed = replay_all(log.dir.path());
    REQUIRE_MESSAGE(replayed.report.status.ok(), replayed.report.status.to_string());
    CHECK(replayed.payloads ==
          std::vector<std::string>(log.payloads.begin(), log.payloads.end() - 1));
  }
  SUBCASE("an earlier group's payload section damaged: corruption") {
    GroupedLog log;
    testing::flip_bit(log.file, log.direct_sections().front().at + format::kSectionHeaderSize + 3);
    const auto strict = replay_all(log.dir.path());
    CHECK(strict.report.status.code() == ErrorCode::kCorruption);
    const auto skip = replay_all(log.dir.path(), RecoveryMode::kSkip);
    CHECK(skip.report.status.ok());
    CHECK(skip.payloads == std::vector<std::string>(log.payloads.begin() + 1, log.payloads.end()));
  }
}

TEST_CASE(
    "direct writes: commitlog_ext_direct_write_threshold parses and rejects bad values by name") {
  auto load = [](const std::string& value) {
    return load_config_string("commitlog_ext_direct_write_threshold: " + value + "\n", "t.yaml");
  };
  auto defaults = load_config_string("commitlog_sync: batch\n", "t.yaml");
  REQUIRE(defaults.ok());
  CHECK(defaults->options.direct_write_threshold == 1 << 20);
  auto kib = load("64KiB");
  REQUIRE(kib.ok());
  CHECK(kib->options.direct_write_threshold == 64 << 10);
  auto off = load("0B");
  REQUIRE(off.ok());
  CHECK(off->options.direct_write_threshold == 0);
  for (const char* bad : {"100B", "4095B", "lots", "-1MiB", "1TiB", "3GiB"}) {
    CAPTURE(bad);
    auto r = load(bad);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().message().find("t.yaml:1: commitlog_ext_direct_write_threshold: '") == 0);
  }
  CHECK(load("100B").status().message().find("at least 4KiB") != std::string::npos);

  TempDir dir;
  Options options = direct_options(dir.path(), Compression::kNone);
  options.direct_write_threshold = 100;
  auto log = CommitLog::open(options);
  REQUIRE_FALSE(log.ok());
  CHECK(log.status().message().find("commitlog_ext_direct_write_threshold") != std::string::npos);
}

}  // namespace
}  // namespace commitlog
