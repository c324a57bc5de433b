// SPDX-License-Identifier: Apache-2.0
// Append now, wait later: an append's own wait (AppendWait), wait_durable()
// after an append that did not wait, and what a failed sync does to both.
//
// Held syncs (FaultFileSystem::hold) stand for a flush in progress: while
// msync and fdatasync are held nothing can become durable, so "returned
// before durable" and "still waiting" are facts, not timings. Time is a
// manual clock: no period, window or marker interval passes unless a test
// moves it, so a flush a test sees was asked for by what it tests.
#include <doctest/doctest.h>

#include <cerrno>
#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "commitlog/commit_log.h"
#include "commitlog/replayer.h"
#include "tests/support/fault_file_system.h"
#include "tests/support/log_files.h"
#include "tests/support/manual_clock.h"

namespace commitlog {
namespace {

using testing::flush_sync;
using testing::kLogDir;
using namespace std::chrono_literals;
using testing::CrashMode;
using testing::FaultFileSystem;
using testing::ManualClock;
using testing::Op;

const std::array<std::string, 4> kPolicies = {"periodic", "batch", "group", "adaptive"};

constexpr Duration kWindow = 1ms;  // group

Options wait_options(FaultFileSystem& fs, ManualClock& clock, const std::string& policy, bool lz4) {
  Options o;
  o.directory = kLogDir;
  o.sync_policy = policy;
  o.clock = &clock;
  o.policy.group_window = kWindow;
  o.segment_size = 1 << 20;
  o.compression = lz4 ? Compression::kLz4 : Compression::kNone;
  o.file_system = &fs;
  return o;
}

bool durable(const CommitLog& log, Position p) { return p < log.stats().durable; }

void hold_syncs(FaultFileSystem& fs) {
  fs.hold(Op::kSyncMapped);
  fs.hold(Op::kSync);
}

void release_syncs(FaultFileSystem& fs) {
  fs.release(Op::kSyncMapped);
  fs.release(Op::kSync);
}

bool ready(const std::future<Status>& f) { return f.wait_for(0s) == std::future_status::ready; }

// Every payload a power loss now would leave.
std::vector<std::string> survivors(FaultFileSystem& fs) {
  const testing::Replayed replayed = testing::replay_all(*fs.crash(CrashMode::kDrop, 1), kLogDir);
  CHECK(replayed.report.status.ok());
  return replayed.payloads;
}

// A log on `fs` with `first` appended without waiting, then synced: what a
// test holds comes after it.
struct SyncedLog {
  std::unique_ptr<CommitLog> log;
  Position first;
};
SyncedLog open_synced(FaultFileSystem& fs, ManualClock& clock, const std::string& policy, bool lz4,
                      const std::string& first) {
  auto opened = CommitLog::open(wait_options(fs, clock, policy, lz4));
  REQUIRE(opened.ok());
  auto appended = (*opened)->append(1, first, {.wait = AppendWait::kNothing});
  REQUIRE(appended.ok());
  REQUIRE((*opened)->sync().ok());
  return {std::move(*opened), *appended};
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

TEST_CASE("wait later: an append that does not wait returns before durable, wait_durable returns once durable") {
  for (const std::string& policy : kPolicies) {
    for (const bool lz4 : {false, true}) {
      CAPTURE(policy);
      CAPTURE(lz4);
      FaultFileSystem fs;
      ManualClock clock;
      const SyncedLog opened = open_synced(fs, clock, policy, lz4, "warm");
      CommitLog& log = *opened.log;
      REQUIRE(durable(log, opened.first));

      hold_syncs(fs);
      auto later = log.append(1, "later", {.wait = AppendWait::kNothing});
      REQUIRE(later.ok());
      CHECK_FALSE(durable(log, *later));
      const Mutation batch[] = {{1, std::as_bytes(std::span("b1", 2))},
                                {1, std::as_bytes(std::span("b2", 2))}};
      auto range = log.append_batch(batch, {.wait = AppendWait::kNothing});
      REQUIRE(range.ok());
      CHECK_FALSE(durable(log, range->last));
      clock.advance(kWindow);  // group's window ends; nobody else waits for time

      auto waited = std::async(std::launch::async, [&] { return log.wait_durable(range->last); });
      REQUIRE(fs.await_held(flush_sync(lz4)));
      CHECK_FALSE(ready(waited));
      CHECK_FALSE(durable(log, *later));
      release_syncs(fs);
      CHECK(waited.get().ok());
      CHECK(durable(log, *later));
      CHECK(durable(log, range->last));
      CHECK(log.wait_durable(*later).ok());  // durable already: at once

      fs.pull_plug();
      log.close().ignore();
      const auto kept = survivors(fs);
      CHECK(contains(kept, "later"));
      CHECK(contains(kept, "b2"));
    }
  }
}

TEST_CASE("wait later: a durable append under periodic asks for a flush and waits for it") {
  for (const bool lz4 : {false, true}) {
    CAPTURE(lz4);
    FaultFileSystem fs;
    ManualClock clock;
    auto opened = CommitLog::open(wait_options(fs, clock, "periodic", lz4));
    REQUIRE(opened.ok());
    CommitLog& log = **opened;
    auto warm = log.append(1, "warm", {.wait = AppendWait::kDurable});
    REQUIRE(warm.ok());
    CHECK(durable(log, *warm));  // and no time passed

    hold_syncs(fs);
    // The policy's own answer: periodic returns at once.
    auto policy = log.append(1, "policy");
    REQUIRE(policy.ok());
    CHECK_FALSE(durable(log, *policy));
    auto appended = std::async(std::launch::async, [&] {
      return log.append(1, "durable", {.wait = AppendWait::kDurable}).status();
    });
    REQUIRE(fs.await_held(flush_sync(lz4)));
    CHECK_FALSE(ready(appended));
    release_syncs(fs);
    CHECK(appended.get().ok());
    CHECK(durable(log, *policy));
    CHECK(log.metrics().syncs_by_reason[static_cast<size_t>(SyncReason::kProducerRequest)] >= 2);
    CHECK(log.metrics().syncs_by_reason[static_cast<size_t>(SyncReason::kPeriod)] == 0);

    fs.pull_plug();
    log.close().ignore();
    const auto kept = survivors(fs);
    CHECK(contains(kept, "durable"));
  }
}

TEST_CASE("wait later: a failed sync fails the later wait of every position it covered, and stays failed") {
  for (const std::string& policy : kPolicies) {
    CAPTURE(policy);
    FaultFileSystem fs;
    ManualClock clock;
    const SyncedLog opened = open_synced(fs, clock, policy, false, "before");
    CommitLog& log = *opened.log;

    std::vector<Position> covered;
    for (int i = 0; i < 3; ++i) {
      auto p = log.append(1, "covered " + std::to_string(i), {.wait = AppendWait::kNothing});
      REQUIRE(p.ok());
      covered.push_back(*p);
    }
    fs.inject(Op::kSyncMapped, EIO);
    clock.advance(kWindow);
    const Status failed = log.wait_durable(covered.back());
    CHECK(failed.code() == ErrorCode::kIoError);
    CHECK(failed.message().find("msync") != std::string::npos);
    fs.clear_faults();  // sticky without the fault
    for (const Position p : covered) {
      CAPTURE(p.to_string());
      CHECK(log.wait_durable(p).code() == ErrorCode::kIoError);
    }
    CHECK(log.wait_durable(opened.first).ok());  // durable before the failure
    CHECK(log.append(1, "after", {.wait = AppendWait::kNothing}).status().code() ==
          ErrorCode::kIoError);
    CHECK(log.sync().code() == ErrorCode::kIoError);
    log.close().ignore();
  }
}

TEST_CASE("wait later: each policy states what an append that follows it is acknowledged with") {
  FaultFileSystem fs;
  ManualClock clock;
  for (const std::string& policy : kPolicies) {
    CAPTURE(policy);
    Options options = wait_options(fs, clock, policy, false);
    options.policy.latency_cap = 3ms;
    auto log = CommitLog::open(options);
    REQUIRE(log.ok());
    const PolicyPromise promise = (*log)->policy_promise();
    CHECK(promise.acknowledges_durable == (policy != "periodic"));
    const Duration delay = policy == "group"      ? kWindow
                           : policy == "adaptive" ? Duration(3ms)
                                                               : Duration::zero();
    CHECK(promise.max_added_delay == delay);
    REQUIRE((*log)->close().ok());
  }
}

}  // namespace
}  // namespace commitlog
