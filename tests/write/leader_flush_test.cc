// SPDX-License-Identifier: Apache-2.0
// A producer on a plain thread that finds no round of the sync loop running
// runs the flush itself (SyncThread::lead_flush); one that finds a flush in
// flight asks the sync thread and rides the next; a fiber always asks.
//
// Held syncs (FaultFileSystem::hold) keep a flush in flight while a test
// looks at what a second producer does; time is a manual clock, so the sync
// thread wakes only when asked.
#include <doctest/doctest.h>

#include <boost/fiber/fiber.hpp>
#include <cerrno>
#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "commitlog/commit_log.h"
#include "tests/support/eventually.h"
#include "tests/support/fault_file_system.h"
#include "tests/support/log_files.h"
#include "tests/support/manual_clock.h"
#include "tests/support/loop_points.h"

namespace commitlog {
namespace {

using testing::eventually;
using testing::flush_sync;
using testing::kLogDir;

using namespace std::chrono_literals;
using testing::CrashMode;
using testing::FaultFileSystem;
using testing::ManualClock;
using testing::Op;

Options batch_options(FaultFileSystem& fs, ManualClock& clock, bool lz4, const char* policy = "batch") {
  Options o;
  o.directory = kLogDir;
  o.sync_policy = policy;
  o.clock = &clock;
  o.segment_size = 1 << 20;
  o.compression = lz4 ? Compression::kLz4 : Compression::kNone;
  o.file_system = &fs;
  return o;
}

// Opened, with the allocator's spare segment made (its syncs are not the ones
// a test holds or fails: the first segment's directory sync and the spare's)
// and the sync thread asleep with nothing planned.
std::unique_ptr<CommitLog> open_batch(FaultFileSystem& fs, ManualClock& clock, bool lz4,
                                      const char* policy = "batch") {
  auto opened = CommitLog::open(batch_options(fs, clock, lz4, policy));
  REQUIRE(opened.ok());
  REQUIRE(eventually([&] { return fs.calls(Op::kSyncDir) >= 2; }));
  REQUIRE(testing::await_asleep("sync loop"));
  return std::move(*opened);
}

uint64_t flushes(const CommitLog& log) { return log.stats().flushes; }
uint64_t led(const CommitLog& log) { return log.metrics().producer_flushes; }

bool await_waiting(const CommitLog& log, uint64_t producers) {
  return eventually([&] { return log.stats().producers_waiting >= producers; });
}

uint64_t replayed_mutations(FaultFileSystem& fs) {
  const testing::Replayed replayed = testing::replay_all(*fs.crash(CrashMode::kDrop, 1), kLogDir);
  CHECK(replayed.report.status.ok());
  return replayed.report.mutations;
}

// adaptive's producers never ask; a lone one that finds the sync thread
// asleep and whose plan is a flush now runs it itself all the same.
TEST_CASE("leader: a thread that finds the sync thread asleep flushes on its own thread, under batch and adaptive") {
  for (const char* policy : {"batch", "adaptive"}) {
    for (const bool lz4 : {false, true}) {
      CAPTURE(policy);
      CAPTURE(lz4);
      FaultFileSystem fs;
      ManualClock clock;
      auto log = open_batch(fs, clock, lz4, policy);
      constexpr uint64_t kAppends = 20;
      for (uint64_t i = 0; i < kAppends; ++i) {
        REQUIRE(log->append(1, "mutation " + std::to_string(i)).ok());
        // Each append's flush ran before it returned, on this thread: the
        // sync thread, never asked, still sleeps.
        CHECK(led(*log) == i + 1);
        CHECK(flushes(*log) == i + 1);
      }
      fs.pull_plug();
      log->close().ignore();
      CHECK(replayed_mutations(fs) == kAppends);
    }
  }
}

TEST_CASE("leader: a thread that finds a flush in flight asks the sync thread and rides the next") {
  for (const bool lz4 : {false, true}) {
    CAPTURE(lz4);
    FaultFileSystem fs;
    ManualClock clock;
    auto log = open_batch(fs, clock, lz4);
    fs.hold(flush_sync(lz4));
    auto leader = std::async(std::launch::async, [&] { return log->append(1, "leader").status(); });
    REQUIRE(fs.await_held(flush_sync(lz4)));
    CHECK(led(*log) == 1);
    auto follower =
        std::async(std::launch::async, [&] { return log->append(1, "follower").status(); });
    REQUIRE(await_waiting(*log, 1));
    // Its request woke the sync thread, which waits for the leader's round.
    REQUIRE(testing::await_awake("sync loop"));
    CHECK(follower.wait_for(0s) != std::future_status::ready);
    fs.release(flush_sync(lz4));
    CHECK(leader.get().ok());
    CHECK(follower.get().ok());
    // The follower's flush was the sync thread's.
    CHECK(led(*log) == 1);
    CHECK(flushes(*log) == 2);
    fs.pull_plug();
    log->close().ignore();
    CHECK(replayed_mutations(fs) == 2);
  }
}

TEST_CASE("leader: a failed sync in a producer's flush fails that producer's append") {
  FaultFileSystem fs;
  ManualClock clock;
  auto log = open_batch(fs, clock, /*lz4=*/false);
  fs.inject(Op::kSyncMapped, EIO);
  const Status failed = log->append(1, "lost").status();
  CHECK(led(*log) == 1);
  CHECK(failed.code() == ErrorCode::kIoError);
  // commit_failure_policy stop: sticky.
  CHECK_FALSE(log->append(1, "after").ok());
}

TEST_CASE("leader: a fiber never flushes on its scheduler thread") {
  FaultFileSystem fs;
  ManualClock clock;
  auto log = open_batch(fs, clock, /*lz4=*/false);
  constexpr int kFibers = 8, kEach = 5;
  int acked = 0;
  std::vector<boost::fibers::fiber> fibers;
  for (int f = 0; f < kFibers; ++f) {
    fibers.emplace_back([&, f] {
      for (int i = 0; i < kEach; ++i) {
        if (log->append(1, std::to_string(f) + "/" + std::to_string(i)).ok()) ++acked;
      }
    });
  }
  for (auto& fiber : fibers) fiber.join();
  CHECK(acked == kFibers * kEach);
  CHECK(flushes(*log) > 0);
  CHECK(led(*log) == 0);
}

}  // namespace
}  // namespace commitlog
