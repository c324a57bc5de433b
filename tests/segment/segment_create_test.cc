// SPDX-License-Identifier: Apache-2.0
// A segment whose creation fails (a full disk, a failing disk) leaves no
// file behind: nothing in it was acknowledged, and a stray empty segment
// file would have to be explained by every later replay.
#include <doctest/doctest.h>

#include <cerrno>

#include "segment/storage/buffer_pool.h"
#include "segment/format.h"
#include "segment/storage/mapped_segment.h"
#include "tests/support/fault_file_system.h"

namespace commitlog {
namespace {

using testing::FaultFileSystem;
using testing::Op;

constexpr uint64_t kCapacity = 64 << 10;

TEST_CASE("segment creation: a failure after the file was made removes it") {
  for (bool compressed : {false, true}) {
    const auto ops = compressed ? std::vector<Op>{Op::kWrite, Op::kSync, Op::kSyncDir}
                                : std::vector<Op>{Op::kAllocate, Op::kMap, Op::kSyncMapped, Op::kSyncDir};
    for (Op op : ops) {
      for (int error : {ENOSPC, EIO}) {
        const std::string op_name = testing::op_name(op);
        CAPTURE(compressed);
        CAPTURE(op_name);
        CAPTURE(error);
        FaultFileSystem fs;
        REQUIRE(fs.create_dirs("/log").ok());
        BufferPool pool(kCapacity, 1);
        fs.inject(op, error);
        SegmentFileInfo info{7, kCapacity,
                             static_cast<uint16_t>(format::kFlagSyncedMarks | (compressed ? format::kFlagLz4Sections : 0)),
                             0};
        auto segment = MappedSegment::create(fs, *real_clock(), "/log", info, &pool);
        REQUIRE_FALSE(segment.ok());
        CHECK(fs.failures(op) == 1);
        CHECK(fs.files().empty());
        // And once the fault is gone the same segment can be made.
        fs.clear_faults();
        CHECK(MappedSegment::create(fs, *real_clock(), "/log", info, &pool).ok());
      }
    }
  }
}

}  // namespace
}  // namespace commitlog
