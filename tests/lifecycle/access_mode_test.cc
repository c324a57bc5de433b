// SPDX-License-Identifier: Apache-2.0
// commitlog_disk_access_mode at work: each mode, plain and LZ4, writes
// segments that replay whole; direct refuses a file system without O_DIRECT,
// naming the directory; auto and legacy come to the mode they say; a flush
// that ends inside a direct I/O block and the rewrite of that block by the
// next flush, torn by a power loss.
#include <doctest/doctest.h>

#include <cerrno>
#include <string>
#include <vector>

#include "commitlog/lifecycle/access_mode.h"
#include "commitlog/commit_log.h"
#include "commitlog/replayer.h"
#include "tests/support/fault_file_system.h"
#include "tests/support/log_files.h"

namespace commitlog {
namespace {

using testing::CrashMode;
using testing::FaultFileSystem;
using testing::kLogDir;
using testing::Op;

Options mode_options(FaultFileSystem& fs, DiskAccessMode mode, Compression compression = Compression::kNone) {
  Options o = testing::batch_options(kLogDir, 64 << 10, compression, 4096);
  o.disk_access_mode = mode;
  o.file_system = &fs;
  return o;
}

std::string payload(int i) {
  // Mostly small, every seventh past a direct I/O block and the direct route's threshold.
  return std::to_string(i) + ":" + std::string(i % 7 == 6 ? 5000 + i : 10 + i % 300, static_cast<char>('a' + i % 26));
}

TEST_CASE("disk access modes: every mode, plain and LZ4, replays every mutation it wrote") {
  const std::pair<DiskAccessMode, Compression> shapes[] = {
      {DiskAccessMode::kMmap, Compression::kNone},     {DiskAccessMode::kStandard, Compression::kNone},
      {DiskAccessMode::kDirect, Compression::kNone},   {DiskAccessMode::kStandard, Compression::kLz4},
      {DiskAccessMode::kDirect, Compression::kLz4},
  };
  for (const auto& shape : shapes) {
    const DiskAccessMode mode = shape.first;
    const Compression compression = shape.second;
    for (uint64_t block : {4096, 16384}) {
      const std::string name = access_mode_name(mode);
      CAPTURE(name);
      CAPTURE(static_cast<int>(compression));
      CAPTURE(block);
      FaultFileSystem fs;
      fs.set_direct_io_block_size(block);
      std::vector<std::string> written;
      {
        auto log = CommitLog::open(mode_options(fs, mode, compression));
        REQUIRE_MESSAGE(log.ok(), log.status().to_string());
        CHECK((*log)->metrics().disk_access_mode == name);
        for (int i = 0; i < 400; ++i) {
          written.push_back(payload(i));
          REQUIRE((*log)->append(1, written.back()).ok());
        }
        REQUIRE((*log)->close().ok());
      }
      const testing::Replayed r = testing::replay_all(fs, kLogDir);
      CHECK_MESSAGE(r.report.status.ok(), r.report.status.to_string());
      CHECK(r.report.problems.empty());
      CHECK(r.payloads == written);
    }
  }
}

TEST_CASE("disk access modes: direct is refused where O_DIRECT is not, naming the directory") {
  for (Compression compression : {Compression::kNone, Compression::kLz4}) {
    FaultFileSystem fs;
    fs.set_direct_io_block_size(0);  // as tmpfs
    auto log = CommitLog::open(mode_options(fs, DiskAccessMode::kDirect, compression));
    REQUIRE_FALSE(log.ok());
    CHECK(log.status().code() == ErrorCode::kNotSupported);
    CHECK_MESSAGE(log.status().message().starts_with("commitlog_disk_access_mode (direct): "),
                  log.status().to_string());
    CHECK_MESSAGE(log.status().message().find(kLogDir) != std::string::npos, log.status().to_string());
  }
}

TEST_CASE("disk access modes: auto takes direct where O_DIRECT works, legacy's choice where not") {
  for (Compression compression : {Compression::kNone, Compression::kLz4}) {
    for (uint64_t block : {0, 4096}) {
      CAPTURE(static_cast<int>(compression));
      CAPTURE(block);
      FaultFileSystem fs;
      fs.set_direct_io_block_size(block);
      auto log = CommitLog::open(mode_options(fs, DiskAccessMode::kAuto, compression));
      REQUIRE_MESSAGE(log.ok(), log.status().to_string());
      const MetricsSnapshot m = (*log)->metrics();
      CHECK(m.disk_access_mode_setting == "auto");
      const char* legacy = compression == Compression::kNone ? "mmap" : "standard";
      CHECK(m.disk_access_mode == (block == 0 ? legacy : "direct"));
      CHECK_MESSAGE(m.disk_access_mode_reason.find(block == 0 ? "legacy's choice" : "O_DIRECT works") !=
                        std::string::npos,
                    m.disk_access_mode_reason);
      CHECK(to_prometheus(m).find("commitlog_disk_access_mode_info{mode=\"" + m.disk_access_mode +
                                  "\",setting=\"auto\"} 1") != std::string::npos);
    }
  }
  FaultFileSystem fs;
  auto log = CommitLog::open(mode_options(fs, DiskAccessMode::kLegacy, Compression::kLz4));
  REQUIRE(log.ok());
  CHECK((*log)->metrics().disk_access_mode == "standard");
  CHECK((*log)->metrics().disk_access_mode_reason == "as commitlog_compression is set");
}

TEST_CASE("disk access modes: direct, a torn rewrite of a flush's last block keeps every earlier flush") {
  // Each batch append is a flush ending inside the block the one before
  // ended in: the block is rewritten with the durable entries and the new
  // one. A failed commit leaves the new write unsynced, and a power loss
  // then tears it per sector; what was acknowledged must all replay, and the
  // unacknowledged entry whole or not at all.
  for (Compression compression : {Compression::kNone, Compression::kLz4}) {
    for (int acked_count : {1, 3, 20, 90}) {
      CAPTURE(static_cast<int>(compression));
      CAPTURE(acked_count);
      FaultFileSystem fs;
      std::vector<std::string> acked;
      auto log = CommitLog::open(mode_options(fs, DiskAccessMode::kDirect, compression));
      REQUIRE(log.ok());
      for (int i = 0; i < acked_count; ++i) {
        acked.push_back(std::to_string(i) + std::string(40 + i % 50, 'x'));
        REQUIRE((*log)->append(1, acked.back()).ok());
      }
      fs.inject(Op::kSync, EIO);
      const std::string lost = "unacknowledged" + std::string(300, 'y');
      CHECK_FALSE((*log)->append(1, lost).ok());
      fs.pull_plug();
      log->reset();
      for (CrashMode mode : testing::kAllCrashModes) {
        for (uint64_t seed = 0; seed < 8; ++seed) {
          const std::string crash_mode = testing::crash_mode_name(mode);
          CAPTURE(crash_mode);
          CAPTURE(seed);
          auto crashed = fs.crash(mode, seed);
          const testing::Replayed r = testing::replay_all(*crashed, kLogDir);
          CHECK_MESSAGE(r.report.status.ok(), r.report.status.to_string());
          std::vector<std::string> expected = acked;
          if (r.payloads.size() == acked.size() + 1) expected.push_back(lost);
          CHECK(r.payloads == expected);
        }
      }
    }
  }
}

}  // namespace
}  // namespace commitlog
