// SPDX-License-Identifier: Apache-2.0
// The built-in policies, driven through a real log: its sync thread, the
// fault-injecting file system and a manual clock. Time moves only when a test
// advances it, a held msync keeps a flush in flight, and a test learns that
// the sync thread settled into a timed sleep from the deadline it announces
// to the clock. Nothing here sleeps.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "commitlog/commit_log.h"
#include "commitlog/policy_registry.h"
#include "commitlog/sync_policy.h"
#include "policies/builtin.h"
#include "tests/support/eventually.h"
#include "tests/support/fault_file_system.h"
#include "tests/support/manual_clock.h"

namespace commitlog {
namespace {
using testing::eventually;

using std::chrono::milliseconds;
using testing::FaultFileSystem;
using testing::ManualClock;
using testing::Op;

struct PolicyLog {
  FaultFileSystem fs;
  ManualClock clock;
  std::unique_ptr<CommitLog> log;

  PolicyLog(const std::string& policy, PolicySettings settings = {}) {
    Options options;
    options.directory = "/policy";
    options.sync_policy = policy;
    options.policy = settings;
    options.segment_size = 1 << 20;
    options.file_system = &fs;
    options.clock = &clock;
    auto opened = CommitLog::open(options);
    REQUIRE_MESSAGE(opened.ok(), opened.status().to_string());
    log = std::move(opened).value();
    // The allocator has made the first segment and prepared the next one:
    // from now on every msync is a flush's.
    REQUIRE(eventually([&] { return fs.calls(Op::kSyncDir) >= 2; }));
  }
  ~PolicyLog() {
    fs.release(Op::kSyncMapped);
    CHECK(log->close().ok());
  }

  uint64_t flushes() const { return log->stats().flushes; }
  uint64_t flushed_mutations() const { return log->stats().flushed_mutations; }
  uint64_t seals() const { return log->stats().seals; }
  size_t waiting() const { return log->stats().producers_waiting; }
  void append() { REQUIRE(log->append(1, "mutation").ok()); }
};

// A producer thread appending `count` mutations, each timed on the clock.
struct Producer {
  PolicyLog& log;
  std::vector<Duration> waits;
  std::atomic<bool> appending{false};  // inside an append (its last one has returned)
  std::atomic<int> started{0};        // appends begun
  std::atomic<bool> done{false};
  std::thread thread;

  Producer(PolicyLog& l, int count) : log(l) {
    thread = std::thread([this, count] {
      for (int i = 0; i < count; ++i) {
        const TimePoint start = log.clock.now();
        appending = true;
        ++started;
        CHECK(log.log->append(1, "mutation").ok());
        appending = false;
        waits.push_back(log.clock.now() - start);
      }
      done = true;
    });
  }
  ~Producer() { join(); }
  void join() {
    if (thread.joinable()) thread.join();
  }
  Duration max_wait() {
    join();
    return *std::max_element(waits.begin(), waits.end());
  }
};

PolicySettings group_window(Duration window) {
  PolicySettings settings;
  settings.group_window = window;
  return settings;
}

PolicySettings periodic(Duration period, Duration marker_interval, Duration lag_block) {
  PolicySettings settings;
  settings.sync_period = period;
  settings.marker_interval = marker_interval;
  settings.lag_block = lag_block;
  return settings;
}

TEST_CASE("batch: a lone producer's every append is flushed at once, with no time passing") {
  PolicyLog log("batch");
  for (uint64_t i = 1; i <= 3; ++i) {
    log.append();
    CHECK(log.flushes() == i);
  }
}

TEST_CASE("batch: producers arriving during a flush ride the next one together") {
  PolicyLog log("batch");
  log.fs.hold(Op::kSyncMapped);
  Producer first(log, 1);
  REQUIRE(log.fs.await_held(Op::kSyncMapped));
  std::vector<std::unique_ptr<Producer>> riders;
  for (int i = 0; i < 5; ++i) riders.push_back(std::make_unique<Producer>(log, 1));
  // The first producer runs the held flush on its own thread if it found the
  // sync thread asleep (SyncThread::lead_flush), else the sync thread runs
  // it; either way it counts as waiting from before it asked.
  REQUIRE(eventually([&] { return log.waiting() == 6u; }));
  CHECK(log.flushes() == 0);
  log.fs.release(Op::kSyncMapped);
  for (auto& rider : riders) rider->join();
  first.join();
  CHECK(log.flushes() == 2);  // back to back: the held one, then one for all five
}

TEST_CASE("batch: idle when nobody waits") {
  PolicyLog log("batch");
  const uint64_t msyncs = log.fs.calls(Op::kSyncMapped);
  for (int i = 0; i < 10; ++i) log.clock.advance(milliseconds(100));
  CHECK(log.flushes() == 0);
  CHECK(log.fs.calls(Op::kSyncMapped) == msyncs);
}

TEST_CASE("group: a lone producer after a quiet spell is flushed at once") {
  PolicyLog log("group", group_window(milliseconds(10)));
  log.clock.advance(milliseconds(100));
  log.append();
  CHECK(log.flushes() == 1);
}

TEST_CASE("group: a producer inside the window waits for the window's end, and no longer") {
  PolicyLog log("group", group_window(milliseconds(10)));
  log.clock.advance(milliseconds(100));
  log.append();  // flushed at once, at t
  const TimePoint t = log.clock.now();
  Producer producer(log, 1);
  REQUIRE(log.clock.await_sleep_until(t + milliseconds(10)));
  CHECK(log.flushes() == 1);
  log.clock.advance(milliseconds(9));
  REQUIRE(log.clock.await_sleep_until(t + milliseconds(10)));
  CHECK_FALSE(producer.done.load());
  CHECK(log.flushes() == 1);
  log.clock.advance(milliseconds(1));
  CHECK(producer.max_wait() == milliseconds(10));
  CHECK(log.flushes() == 2);
}

// Time moves only once every producer still appending waits in its next
// append: its entry is written, it counts as waiting, and no count is left of
// a wait that already ended (every entry before the current ones is durable,
// and only the current ones are not). Then each flush must release every
// producer, so none waits beyond one window however the threads are
// scheduled.
TEST_CASE("group: at most one flush per window, no producer waits beyond it, and groups form") {
  constexpr Duration kWindow = milliseconds(10);
  constexpr int kProducers = 4, kAppends = 25;
  PolicyLog log("group", group_window(kWindow));
  std::vector<std::unique_ptr<Producer>> producers;
  for (int i = 0; i < kProducers; ++i) producers.push_back(std::make_unique<Producer>(log, kAppends));
  auto running = [&] {
    return static_cast<size_t>(std::count_if(producers.begin(), producers.end(),
                                             [](auto& p) { return !p->done.load(); }));
  };
  auto started = [&] {
    uint64_t total = 0;
    for (auto& p : producers) total += static_cast<uint64_t>(p->started.load());
    return total;
  };
  auto all_waiting = [&] {
    const size_t n = running();
    return std::all_of(producers.begin(), producers.end(),
                       [](auto& p) { return p->done.load() || p->appending.load(); }) &&
           log.waiting() == n && log.flushed_mutations() + n == started() && n == running();
  };
  uint64_t flushes_at_last_window = log.flushes();
  TimePoint last_deadline = log.clock.now();
  while (running() > 0) {
    // Every appended entry is durable or waiting for the next flush.
    REQUIRE(eventually([&] { return running() == 0 || all_waiting(); }));
    if (running() == 0) break;
    const TimePoint deadline = log.clock.await_next_deadline();
    REQUIRE(deadline != TimePoint::max());
    CHECK(log.flushes() - flushes_at_last_window <= 1);
    CHECK(deadline - last_deadline >= kWindow);
    CHECK(deadline - log.clock.now() <= kWindow);
    flushes_at_last_window = log.flushes();
    last_deadline = deadline;
    const uint64_t appended = started();
    log.clock.advance_to(deadline);
    // The flush at the deadline makes every entry written before it durable.
    REQUIRE(eventually([&] { return log.flushed_mutations() == appended; }));
  }
  for (auto& p : producers) CHECK(p->max_wait() <= kWindow);
  // Fewer flushes than appends: producers share them.
  CHECK(log.flushes() < kProducers * kAppends);
}

TEST_CASE("group needs a window") {
  auto policy = PolicyRegistry::global().create("group", PolicySettings{});
  REQUIRE_FALSE(policy.ok());
  CHECK(policy.status().message().find("commitlog_sync_group_window") != std::string::npos);
}

TEST_CASE("periodic: producers never wait while syncs keep up, one flush per period") {
  PolicyLog log("periodic", periodic(milliseconds(100), milliseconds(100), milliseconds(150)));
  for (uint64_t period = 1; period <= 10; ++period) {
    for (int i = 0; i < 10; ++i) log.append();  // returns at once, or the test hangs
    const TimePoint deadline = log.clock.await_next_deadline();
    log.clock.advance_to(deadline);
    REQUIRE(eventually([&] { return log.flushes() == period; }));
  }
  CHECK(log.seals() == 0);  // the marker interval equals the period: folded into the flushes
}

TEST_CASE("periodic: a producer waits while the last flush started more than lag_block ago") {
  PolicyLog log("periodic", periodic(milliseconds(100), milliseconds(100), milliseconds(150)));
  const TimePoint t0 = log.clock.now();
  log.append();
  log.fs.hold(Op::kSyncMapped);
  REQUIRE(log.clock.await_sleep_until(t0 + milliseconds(100)));
  log.clock.advance(milliseconds(100));
  REQUIRE(log.fs.await_held(Op::kSyncMapped));  // the flush of t0 + 100 ms, on a slow disk
  log.clock.advance(milliseconds(49));
  log.append();  // the last completed flush started 149 ms ago: at once
  log.clock.advance(milliseconds(51));
  Producer lagging(log, 1);  // 200 ms ago: waits for the flush in flight
  REQUIRE(eventually([&] { return log.waiting() == 1; }));
  CHECK_FALSE(lagging.done.load());
  log.fs.release(Op::kSyncMapped);
  lagging.join();
  CHECK(log.flushes() >= 1);
  log.append();  // caught up: at once again
}

TEST_CASE("periodic: a marker about every marker interval between flushes") {
  PolicyLog log("periodic", periodic(milliseconds(1000), milliseconds(100), milliseconds(15000)));
  for (uint64_t step = 1; step <= 20; ++step) {
    log.append();
    log.clock.advance(milliseconds(100));
    REQUIRE(eventually([&] { return log.seals() + log.flushes() == step; }));
  }
  CHECK(log.flushes() == 2);
  CHECK(log.seals() == 18);
}

// A policy that holds every flush an hour after the last one, and stops its
// first plan with a producer waiting at a gate the test opens.
struct GatedPlans {
  std::atomic<int> plans{0};
  std::atomic<bool> at_gate{false};
  std::atomic<bool> open{false};
};
GatedPlans gated;

class GatedHoldPolicy final : public SyncPolicy {
 public:
  std::string_view name() const override { return "test-gated-hold"; }
  ProducerAction after_append(const ProducerView&) const override {
    return ProducerAction::kWaitDurable;
  }
  SyncPlan plan(const SyncState& s) override {
    if (!s.has_unflushed || s.waiting_producers == 0) return {};
    if (gated.plans.fetch_add(1) == 0) {
      gated.at_gate = true;
      while (!gated.open) std::this_thread::yield();
    }
    return {SyncPlan::Kind::kFlush, s.last_flush_finished + std::chrono::hours(1),
            SyncReason::kWindow};
  }
};

TEST_CASE("a producer that starts waiting while a hold is planned does not make the thread plan it again") {
  static const bool registered =
      PolicyRegistry::global()
          .add("test-gated-hold",
               [](const PolicySettings&) -> Result<std::unique_ptr<SyncPolicy>> {
                 return std::unique_ptr<SyncPolicy>(new GatedHoldPolicy);
               })
          .ok();
  REQUIRE(registered);
  PolicyLog log("test-gated-hold");
  Producer first(log, 1);
  REQUIRE(eventually([&] { return gated.at_gate.load(); }));
  Producer second(log, 1);
  REQUIRE(eventually([&] { return log.waiting() == 2; }));
  // Past the second waiter's notice to the sync thread, which follows its count.
  const auto margin = std::chrono::steady_clock::now() + milliseconds(20);
  while (std::chrono::steady_clock::now() < margin) std::this_thread::yield();
  const TimePoint hold_end = log.clock.now() + std::chrono::hours(1);
  gated.open = true;
  // The thread sleeps until the planned time, announced once it is asleep;
  // planning again would have come before that sleep.
  REQUIRE(log.clock.await_sleep_until(hold_end));
  CHECK(gated.plans == 1);
  CHECK(log.flushes() == 0);
  log.clock.advance(std::chrono::hours(1));
  first.join();
  second.join();
  CHECK(log.flushes() == 1);
}

// Answers with values outside the enums, where something is to be done.
class OutOfRangePolicy final : public SyncPolicy {
 public:
  std::string_view name() const override { return "test-out-of-range"; }
  ProducerAction after_append(const ProducerView&) const override { return static_cast<ProducerAction>(99); }
  SyncPlan plan(const SyncState& s) override {
    if (s.waiting_producers == 0) return {};
    return {static_cast<SyncPlan::Kind>(99), s.now, SyncReason::kWindow};
  }
};

TEST_CASE("a policy's answers outside the enums are taken as a sync at once that the producer waits for") {
  REQUIRE(PolicyRegistry::global()
              .add("test-out-of-range",
                   [](const PolicySettings&) -> Result<std::unique_ptr<SyncPolicy>> {
                     return std::unique_ptr<SyncPolicy>(new OutOfRangePolicy);
                   })
              .ok());
  PolicyLog log("test-out-of-range");
  auto at = log.log->append(1, "mutation");
  REQUIRE(at.ok());
  // Returned only once durable: the plan was taken as a flush, the answer as
  // a wait for it. (The policy plans again while the woken producer still
  // counts as waiting, so there may be more flushes than one.)
  CHECK(log.flushes() >= 1);
  CHECK(*at < log.log->stats().durable);
}

TEST_CASE("the registry lists the built-ins, refuses duplicates and unknown names") {
  auto names = PolicyRegistry::global().names();
  for (const char* n : {"batch", "group", "periodic", "adaptive"})
    CHECK(std::find(names.begin(), names.end(), n) != names.end());
  CHECK_FALSE(PolicyRegistry::global().add("batch", make_batch_policy).ok());
  for (const char* bad : {"", "two words", "name: value", "line\nbreak"})
    CHECK(PolicyRegistry::global().add(bad, make_batch_policy).code() == ErrorCode::kInvalidArgument);
  auto unknown = PolicyRegistry::global().create("nonesuch", {});
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.status().message().find("nonesuch") != std::string::npos);
  CHECK(unknown.status().message().find("periodic") != std::string::npos);
}

TEST_CASE("a policy factory that makes nothing is refused by name, whether it returns null or an ok Status") {
  PolicyRegistry registry;
  REQUIRE(registry.add("null-policy", [](const PolicySettings&) -> Result<std::unique_ptr<SyncPolicy>> {
    return std::unique_ptr<SyncPolicy>();
  }).ok());
  REQUIRE(registry.add("ok-status", [](const PolicySettings&) -> Result<std::unique_ptr<SyncPolicy>> {
    return Status{};
  }).ok());
  auto null_policy = registry.create("null-policy", {});
  REQUIRE_FALSE(null_policy.ok());
  CHECK(null_policy.status().message() == "sync policy 'null-policy' could not be made: its factory returned null");
  auto ok_status = registry.create("ok-status", {});
  REQUIRE_FALSE(ok_status.ok());
  CHECK(ok_status.status().code() == ErrorCode::kInvalidArgument);
  CHECK(ok_status.status().message() == "a Result was made from an ok Status, with no value");
}

}  // namespace
}  // namespace commitlog
