// SPDX-License-Identifier: Apache-2.0
// A full disk never leaves a log that will not open. The log fills a
// FaultFileSystem with a space limit in every access mode, plain and LZ4,
// with a growth that fails outright and one that first extends the file part
// of the way (ext4's fallocate, a short direct write); then, with room again,
// the directory replays in the default recovery mode with every acknowledged
// mutation, and the log opens and appends. And from bytes: a compressed
// segment longer than its allocation steps by zeros is a growth the disk did
// not finish, while a cut, also one inside a header that began a step, stays
// a cut. tests/lifecycle/full_disk_test.sh does the same on a small real file system.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "commitlog/lifecycle/access_mode.h"
#include "commitlog/commit_log.h"
#include "commitlog/replayer.h"
#include "segment/format.h"
#include "tests/support/fault_file_system.h"
#include "tests/support/log_files.h"
#include "tests/support/segment_bytes.h"

namespace commitlog {
namespace {

using testing::FaultFileSystem;
using testing::kLogDir;

// Varied bytes that LZ4 shrinks only a little, so the disk fills.
std::string payload(uint64_t i) {
  std::string out = std::to_string(i) + ":";
  uint64_t x = i * 0x9E3779B97F4A7C15ULL + 1;
  const size_t length = 200 + (i * 7919) % 3000;
  while (out.size() < length) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    out.push_back(static_cast<char>('a' + x % 26));
  }
  return out;
}

uint64_t used_bytes(FaultFileSystem& fs) {
  uint64_t used = 0;
  for (const std::string& path : fs.files()) {
    auto file = fs.open(path, OpenMode::kRead);
    if (file.ok()) used += (*file)->size().value();
  }
  return used;
}

TEST_CASE("full disk: every access mode, plain and LZ4, reopens with every acknowledged mutation") {
  const std::pair<DiskAccessMode, Compression> shapes[] = {
      {DiskAccessMode::kMmap, Compression::kNone},     {DiskAccessMode::kStandard, Compression::kNone},
      {DiskAccessMode::kDirect, Compression::kNone},   {DiskAccessMode::kStandard, Compression::kLz4},
      {DiskAccessMode::kLegacy, Compression::kLz4},    {DiskAccessMode::kDirect, Compression::kLz4},
  };
  for (const auto& [mode, compression] : shapes) {
    for (const bool partial : {false, true}) {
      // Room for the first segments and then some: the disk fills in a segment's
      // creation, in an allocation step or in a flush, as the room falls.
      for (const uint64_t room : {uint64_t{70} << 10, uint64_t{150} << 10, uint64_t{301} << 10}) {
        const std::string name = access_mode_name(mode);
        const bool lz4 = compression == Compression::kLz4;
        CAPTURE(name);
        CAPTURE(lz4);
        CAPTURE(partial);
        CAPTURE(room);
        FaultFileSystem fs;
        Options options = testing::batch_options(kLogDir, 64 << 10, compression, 8192);
        options.disk_access_mode = mode;
        options.file_system = &fs;
        std::vector<std::string> acked;
        {
          auto log = testing::open_log(options);
          fs.set_space_limit(used_bytes(fs) + room, partial);
          for (uint64_t i = 0; i < 5000; ++i) {
            const std::string p = payload(i);
            if (!log->append(1, p).ok()) break;
            acked.push_back(p);
          }
          REQUIRE_MESSAGE(acked.size() < 5000, "the disk never filled");
          log->close().ignore();  // the disk is still full: it may fail
        }
        if (lz4) {
          // The writer cut every failed growth back: each file ends where its
          // steps do (rounded up to a block in direct mode).
          for (const std::string& path : fs.files()) {
            CAPTURE(path);
            auto file = fs.open(path, OpenMode::kRead);
            REQUIRE(file.ok());
            const uint64_t size = (*file)->size().value();
            bool on_a_step = false;
            for (uint64_t end = format::kHeaderSize; end <= size; end += 64 << 10) {
              on_a_step |= size == (mode == DiskAccessMode::kDirect ? (end + 4095) / 4096 * 4096 : end);
            }
            CHECK_MESSAGE(on_a_step, size);
          }
        }
        fs.set_space_limit(std::nullopt);

        const testing::Replayed replayed = testing::replay_all(fs, kLogDir);
        REQUIRE_MESSAGE(replayed.report.status.ok(), replayed.report.status.to_string());
        CHECK(replayed.report.corruptions == 0);
        REQUIRE(replayed.payloads.size() >= acked.size());
        CHECK(std::vector<std::string>(replayed.payloads.begin(),
                                       replayed.payloads.begin() + static_cast<ptrdiff_t>(acked.size())) == acked);
        {
          auto log = testing::open_log(options);
          CHECK(log->append(1, "after").ok());
          CHECK(log->close().ok());
        }
        const testing::Replayed again = testing::replay_all(fs, kLogDir);
        CHECK_MESSAGE(again.report.status.ok(), again.report.status.to_string());
        REQUIRE_FALSE(again.payloads.empty());
        CHECK(again.payloads.back() == "after");
      }
    }
  }
}

// Where the writer took its allocation steps: the file's size when section i
// was written, and whether it took a step for it.
struct Steps {
  std::vector<uint64_t> before;
  std::vector<bool> grew;
};

Steps steps_of(const std::vector<std::byte>& file, const std::vector<uint64_t>& at, uint64_t capacity, uint16_t flags) {
  Steps steps;
  uint64_t allocated = format::kHeaderSize;
  const uint64_t step = std::min(format::kCompressedAllocationStep, capacity);
  for (const uint64_t offset : at) {
    const auto s = decode_section_header(file.data() + offset, 1000, offset, flags, capacity);
    REQUIRE(s.has_value());
    const uint64_t total = format::align_up(format::kSectionHeaderSize + uint64_t{s->stored_length});
    steps.before.push_back(allocated);
    steps.grew.push_back(offset + total > allocated);
    if (offset + total > allocated) allocated += std::max(step, total);
  }
  return steps;
}

bool truncated(const testing::ReadBack& r) {
  for (const SectionDamage& d : r.section_damage) {
    if (d.kind == DamageKind::kTruncated) return true;
  }
  return false;
}

TEST_CASE("full disk: a compressed segment grown part of a step is whole, and a cut stays a cut") {
  constexpr uint64_t kCapacity = 4096;  // steps of 4096 bytes
  constexpr uint16_t kFlags = format::kFlagLz4Sections | format::kFlagSyncedMarks;
  // Sections of varied sizes, one payload each, until one's header begins
  // less than a header's length before the end of the file the writer had:
  // the writer took the next step for it.
  for (uint64_t seed = 0; seed < 200; ++seed) {
    testing::SegmentBuilder builder(1000, kCapacity, kFlags);
    std::vector<std::string> written;
    for (uint64_t i = 0;; ++i) {
      const std::string p = payload(seed * 100 + i).substr(0, 20 + (seed * 31 + i * 17) % 90);
      if (builder.open_marker() + 2 * format::kMarkerSize + format::entry_footprint(p.size()) > kCapacity) break;
      builder.section({p});
      written.push_back(p);
    }
    std::vector<uint64_t> at;
    const std::vector<std::byte> file = builder.compressed(&at);
    REQUIRE(testing::read_segment(file).payloads == written);
    const Steps steps = steps_of(file, at, kCapacity, kFlags);

    if (seed == 0) {
      // A growth the disk did not finish: zeros past the last step, less than a step.
      for (const uint64_t extra : {uint64_t{1024}, uint64_t{4095}}) {
        CAPTURE(extra);
        std::vector<std::byte> grown = file;
        grown.resize(grown.size() + extra);
        const testing::ReadBack r = testing::read_segment(grown);
        CHECK(r.payloads == written);
        CHECK(r.section_damage.empty());
        CHECK(r.damage.empty());
      }
      // Cut inside the last section, or in the zeros after it.
      std::vector<std::byte> cut = file;
      cut.resize(at.back() + format::kSectionHeaderSize + 3);
      CHECK(truncated(testing::read_segment(cut)));
      REQUIRE(file.back() == std::byte{0});
      cut = file;
      cut.pop_back();
      CHECK(truncated(testing::read_segment(cut)));
    }
    for (size_t i = 1; i < at.size(); ++i) {
      if (!steps.grew[i] || at[i] + format::kSectionHeaderSize <= steps.before[i] + 1) continue;
      // Section i's header reaches past the end of the file it was written
      // into: a cut inside it there leaves the file longer than the steps
      // of the sections read before it, with a fragment of a header at its end.
      for (uint64_t size = steps.before[i] + 1; size < at[i] + format::kSectionHeaderSize; ++size) {
        CAPTURE(size);
        const std::vector<std::byte> cut(file.begin(), file.begin() + static_cast<ptrdiff_t>(size));
        const testing::ReadBack r = testing::read_segment(cut);
        CHECK(truncated(r));
        CHECK(r.payloads == std::vector<std::string>(written.begin(), written.begin() + static_cast<ptrdiff_t>(i)));
      }
      return;
    }
  }
  FAIL("no seed put a section header across the end of an allocation step");
}

}  // namespace
}  // namespace commitlog
