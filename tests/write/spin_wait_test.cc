// SPDX-License-Identifier: Apache-2.0
// Spinning before sleeping (Options::spin_wait): only a lone producer whose
// flushes carry its own mutation spins, and only while its waits stay within
// the limit; a zero limit never spins.
// On a manual clock: a spin announces its end to the clock and runs out only
// when the test moves the time past it, and a wait's length is the time the
// test moved meanwhile. So each wait's decision (spin or sleep) is seen as it
// is made, and nothing here depends on how fast a thread runs.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "commitlog/commit_log.h"
#include "commitlog/policy_registry.h"
#include "commitlog/sync_policy.h"
#include "commitlog/write/durable_waiters.h"
#include "tests/support/manual_clock.h"
#include "tests/support/temp_dir.h"

namespace commitlog {
namespace {

using namespace std::chrono_literals;
using testing::ManualClock;

constexpr Duration kSpinLimit = 100ms;

// A DurableWaiters on a manual clock and one thread at a time waiting on it.
struct SpinRig {
  ManualClock clock;
  DurableWaiters waiters;
  uint64_t packed = 0;

  explicit SpinRig(Duration limit = kSpinLimit) : waiters(clock, limit) {}

  const SpinCounters& counters() const { return waiters.spin_counters(); }

  // What a waiter decided, seen from its announcement or its sleep: 's' it
  // spun, 'z' it slept at once; nothing for a waiter that decided neither
  // within 30 s of real time (a broken test).
  char decision(uint64_t sleeps_before, Duration limit) {
    const TimePoint spin_end = clock.now() + limit;
    const auto give_up = std::chrono::steady_clock::now() + 30s;
    while (std::chrono::steady_clock::now() < give_up) {
      if (counters().sleeps.load() > sleeps_before) return 'z';
      if (limit > Duration::zero() && clock.await_sleep_until(spin_end, 1ms)) return 's';
      std::this_thread::yield();
    }
    return '?';
  }

  // One thread waits for the next position and is released once it
  // decided. A spin it starts ends in time ('s'), or, with `run_out`, runs
  // out ('m': the time moves past its end), and the wait then lasts twice
  // the limit. Then a millisecond passes between this wait and the next.
  char wait_once(bool run_out = false, Duration limit = kSpinLimit) {
    const uint64_t target = packed += 10;
    const uint64_t sleeps = counters().sleeps.load();
    const uint64_t missed = counters().missed.load();
    std::thread waiter([&] { CHECK(waiters.wait_durable(target).ok()); });
    char seen = decision(sleeps, limit);
    if (seen == 's' && run_out) {
      clock.advance(limit);
      while (counters().missed.load() == missed || counters().sleeps.load() == sleeps) {
        std::this_thread::yield();
      }
      clock.advance(limit);
      seen = 'm';
    }
    waiters.advance(target + 1, clock.now());
    waiter.join();
    clock.advance(1ms);
    return seen;
  }
  std::string waits(int n) {
    std::string seen;
    for (int i = 0; i < n; ++i) seen += wait_once();
    return seen;
  }
};

TEST_CASE("spin wait: a lone thread spins after one-mutation flushes while its waits are short") {
  SpinRig rig;
  CHECK(rig.wait_once() == 'z');  // no flush noted yet
  rig.waiters.note_flush(1);
  CHECK(rig.wait_once() == 's');
  rig.waiters.note_flush(3);  // flushes of several mutations: the CPU is the others'
  CHECK(rig.wait_once() == 'z');

  rig.waiters.note_flush(1);
  CHECK(rig.wait_once(/*run_out=*/true) == 'm');  // a wait longer than the limit
  CHECK(rig.wait_once() == 'z');  // so this one sleeps at once
  CHECK(rig.wait_once() == 'z');  // one wait of back-off after one spin that ran out
  CHECK(rig.wait_once() == 's');  // then it spins again
  CHECK(rig.counters().spins.load() == 3);
  CHECK(rig.counters().missed.load() == 1);
  CHECK(rig.counters().nanos.load() == static_cast<uint64_t>(Duration(kSpinLimit).count()));
}

// A waiter whose spins run out (the thread it waits for cannot run meanwhile)
// spins ever more rarely: after the n-th such spin in a row, 2^n - 1 waits
// sleep; one spin that ends in time starts the count again.
TEST_CASE("spin wait: spins that run out back off, doubling, until one ends in time") {
  SpinRig rig;
  rig.waiters.note_flush(1);
  std::string seen;
  // A spin that runs out makes a long wait: the next wait sleeps without
  // counting as back-off.
  const auto spin_runs_out = [&] {
    seen += rig.wait_once(/*run_out=*/true);
    seen += rig.wait_once();
    seen += ' ';
  };
  const auto short_waits = [&](int n) { seen += rig.waits(n) + ' '; };
  short_waits(1);
  spin_runs_out();  // the first in a row: one wait of back-off
  short_waits(1);
  spin_runs_out();  // the second in a row: three
  short_waits(3);
  short_waits(1);   // spins, in time
  spin_runs_out();  // the first in a row again: one wait of back-off, not seven
  short_waits(1);
  short_waits(1);
  CHECK(seen == "s mz z mz zzz s mz z s ");
  CHECK(rig.counters().spins.load() == 6);
  CHECK(rig.counters().missed.load() == 3);
}

TEST_CASE("spin wait: backing off stops doubling at 2^10 - 1 waits") {
  SpinRig rig;
  rig.waiters.note_flush(1);
  for (int n = 1; n <= 11; ++n) {
    CAPTURE(n);
    REQUIRE(rig.wait_once(/*run_out=*/true) == 'm');
    REQUIRE(rig.wait_once() == 'z');  // after the long wait
    const int backoff = (1 << std::min(n, 10)) - 1;
    REQUIRE(rig.waits(backoff) == std::string(static_cast<size_t>(backoff), 'z'));
  }
  CHECK(rig.wait_once() == 's');
}

TEST_CASE("spin wait: a thread that is not alone, or a zero limit, never spins") {
  SpinRig rig(5ms);
  std::thread first([&] { CHECK(rig.waiters.wait_durable(30).ok()); });  // no flush noted: sleeps
  REQUIRE(rig.decision(0, 5ms) == 'z');
  rig.waiters.note_flush(1);
  std::thread second([&] { CHECK(rig.waiters.wait_durable(20).ok()); });
  // However late it decides, the first still waits beside it.
  CHECK(rig.decision(1, 5ms) == 'z');
  rig.waiters.advance(21, rig.clock.now());
  second.join();
  rig.waiters.advance(31, rig.clock.now());
  first.join();
  CHECK(rig.counters().spins.load() == 0);

  SpinRig never(Duration::zero());
  never.waiters.note_flush(1);
  CHECK(never.waits(2) == "zz");
  CHECK(never.counters().spins.load() == 0);
}

// A policy whose producers ask for a flush and whose thread, between
// flushes, sleeps until a time an hour away: the thread never sleeps with
// nothing planned, so a lone producer never runs the flush itself
// (SyncThread::lead_flush) and waits for the thread's every time -- the wait
// a spin is for.
class HandOffPolicy final : public SyncPolicy {
 public:
  std::string_view name() const override { return "test-hand-off"; }
  ProducerAction after_append(const ProducerView&) const override {
    return ProducerAction::kRequestSyncAndWait;
  }
  SyncPlan plan(const SyncState& s) override {
    if (s.sync_requested && s.has_unflushed) {
      return {SyncPlan::Kind::kFlush, s.now, SyncReason::kProducerRequest};
    }
    return {SyncPlan::Kind::kFlush, s.now + std::chrono::hours(1), SyncReason::kWindow};
  }
};

// On a manual clock that nobody moves, no spin runs out however long the
// sync thread takes, so none misses. How many of the waits spin depends on
// how many find their flush done by the time they would (a wait all the
// same, with no spin and no sleep); the tests above pin down the choice
// itself.
MetricsSnapshot lone_producer_run(Duration spin_wait) {
  static const bool registered =
      PolicyRegistry::global()
          .add("test-hand-off",
               [](const PolicySettings&) -> Result<std::unique_ptr<SyncPolicy>> {
                 return std::unique_ptr<SyncPolicy>(new HandOffPolicy);
               })
          .ok();
  REQUIRE(registered);
  testing::TempDir dir;
  ManualClock clock;
  Options options;
  options.directory = dir.path();
  options.sync_policy = "test-hand-off";
  options.spin_wait = spin_wait;
  options.clock = &clock;
  auto log = CommitLog::open(options);
  REQUIRE(log.ok());
  for (int i = 0; i < 100; ++i) REQUIRE((*log)->append(1, std::string(100, 'x')).ok());
  const MetricsSnapshot metrics = (*log)->metrics();
  REQUIRE((*log)->close().ok());
  return metrics;
}

TEST_CASE("spin wait: a lone producer that the sync thread flushes for spins instead of sleeping, unless turned off") {
  const MetricsSnapshot spun = lone_producer_run(10ms);
  CHECK(spun.mutations_completed == 100);
  CHECK(spun.producer_flushes == 0);
  REQUIRE(spun.commit_waits > 1);
  CHECK(spun.spins > 0);
  CHECK(spun.spins <= spun.commit_waits);
  CHECK(spun.spins_missed == 0);
  const MetricsSnapshot slept = lone_producer_run(Duration::zero());
  CHECK(slept.mutations_completed == 100);
  CHECK(slept.commit_waits > 0);
  CHECK(slept.spins == 0);
  CHECK(slept.spin_nanos == 0);
}

TEST_CASE("spin wait: the log refuses a limit below 0 or above 10ms") {
  testing::TempDir dir;
  Options options;
  options.directory = dir.path();
  options.spin_wait = 11ms;
  auto refused = CommitLog::open(options);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().message().find("commitlog_ext_spin_wait") != std::string::npos);
  options.spin_wait = -1us;
  CHECK_FALSE(CommitLog::open(options).ok());
}

}  // namespace
}  // namespace commitlog
