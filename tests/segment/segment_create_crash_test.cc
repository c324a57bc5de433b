// SPDX-License-Identifier: Apache-2.0
// A process killed (kill -9) or a machine losing power while a segment file
// is made leaves a file that replay accepts: no header yet (zeros, perhaps
// short of the capacity: the unused leftover of FORMAT.md's replay table), or
// a header on a file of its full size. Never a header on a file cut short,
// which reads as truncation, corruption (a header-first pre-write leaves one
// when a kill falls between two of its pwrites).
//
// The kill: every call of one operation fails from its k-th on, for each k,
// and so does the remove() that cleans up after a failed creation, so the
// file stays as the process left it. A kill -9 loses nothing in the page
// cache, so the next process reads the current bytes; a power loss keeps
// what crash() keeps, here after another thread synced the directory.
#include <doctest/doctest.h>

#include <cerrno>
#include <string>

#include "commitlog/replayer.h"
#include "segment/storage/buffer_pool.h"
#include "segment/format.h"
#include "segment/storage/mapped_segment.h"
#include "tests/support/fault_file_system.h"

namespace commitlog {
namespace {

using testing::CrashMode;
using testing::FaultFileSystem;
using testing::kLogDir;
using testing::Op;

struct SegmentShape {
  StorageMode mode;
  uint64_t capacity;
};

constexpr Op kSteps[] = {Op::kAllocate, Op::kMap, Op::kWrite, Op::kSyncMapped, Op::kSync};

SegmentFileInfo info_for(const SegmentShape& shape) {
  return {7, shape.capacity, format::kFlagSyncedMarks, 0};
}

// The replay of `fs`'s log, even an absolute one: no error, no corruption.
void check_replays(FileSystem& fs, const std::string& what) {
  for (RecoveryMode mode : {RecoveryMode::kTolerateTornTail, RecoveryMode::kAbsolute}) {
    ReplayOptions options;
    options.mode = mode;
    options.file_system = &fs;
    const ReplayReport report =
        replay_directory(kLogDir, options, [](const ReplayedMutation&) { return Status{}; });
    std::string problems;
    for (const ReplayProblem& p : report.problems) {
      problems += p.file + ": offset " + std::to_string(p.offset) + ": " + p.kind + "\n";
    }
    const std::string context = what + ", " + recovery_mode_name(mode) + "\n" + problems;
    INFO(context);
    CHECK_MESSAGE(report.status.ok(), report.status.to_string());
    CHECK(report.corruptions == 0);
    CHECK(report.mutations == 0);
  }
}

// Fails each call a creation of `shape` makes, one at a time, and replays
// the file as a kill -9 and as a power loss leave it.
void check_every_step(const SegmentShape& shape) {
  BufferPool pool(shape.capacity, 1);
  // How many calls of each step a creation makes.
  uint64_t calls[testing::kOpCount] = {};
  {
    FaultFileSystem fs;
    REQUIRE(fs.create_dirs(kLogDir).ok());
    REQUIRE(
        MappedSegment::create(fs, *real_clock(), kLogDir, info_for(shape), &pool, shape.mode).ok());
    for (Op op : kSteps) calls[static_cast<size_t>(op)] = fs.calls(op);
  }
  for (Op op : kSteps) {
    for (uint64_t k = 0; k < calls[static_cast<size_t>(op)]; ++k) {
      const std::string step = std::string(testing::op_name(op)) + " #" + std::to_string(k + 1);
      CAPTURE(step);
      FaultFileSystem fs;
      REQUIRE(fs.create_dirs(kLogDir).ok());
      fs.inject(op, EIO, static_cast<int>(k));
      fs.inject(Op::kRemove, EIO);  // the process is dead: nobody cleans up
      REQUIRE_FALSE(
          MappedSegment::create(fs, *real_clock(), kLogDir, info_for(shape), &pool, shape.mode)
              .ok());
      REQUIRE(fs.files().size() == 1);
      fs.clear_faults();
      check_replays(fs, "after a kill -9");
      // A power loss instead, once the new name is durable (any sync of
      // the directory, e.g. an old segment's removal, makes it so).
      REQUIRE(fs.sync_dir(kLogDir).ok());
      fs.pull_plug();
      for (CrashMode mode : testing::kAllCrashModes) {
        for (uint64_t seed = 0; seed < 16; ++seed) {
          auto crashed = fs.crash(mode, seed);
          check_replays(*crashed, std::string("after a power loss, ") +
                                      testing::crash_mode_name(mode) + " seed " +
                                      std::to_string(seed));
        }
      }
    }
  }
}

TEST_CASE("segment creation: a kill -9 or a power loss at any step leaves a file replay accepts: mmap") {
  check_every_step({{SegmentIo::kMapped, 0}, 64 << 10});
}

TEST_CASE("segment creation: a kill -9 or a power loss at any step leaves a file replay accepts: standard") {
  check_every_step({{SegmentIo::kStandard, 0}, 64 << 10});
}

TEST_CASE("segment creation: a kill -9 or a power loss at any step leaves a file replay accepts: direct") {
  // Above the 1 MiB pre-write chunk, so it takes two writes.
  check_every_step({{SegmentIo::kDirect, 4096}, (1 << 20) + (64 << 10)});
}

}  // namespace
}  // namespace commitlog
