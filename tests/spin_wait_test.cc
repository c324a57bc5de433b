// Spinning before sleeping (Options::spin_wait): only a lone producer whose
// flushes carry its own mutation spins, and only while its waits stay within
// the limit; a zero limit never spins.
// Spins are counted, so these tests see whether a wait spun, not how fast it was.
#include <doctest/doctest.h>
#include <sched.h>

#include <chrono>
#include <string>
#include <thread>

#include "commitlog/commit_log.h"
#include "commitlog/durable_waiters.h"
#include "tests/support/temp_dir.h"

namespace commitlog {
namespace {

using namespace std::chrono_literals;

// One thread waits for `packed`; it is released `after` it counts as waiting.
void lone_wait(DurableWaiters& waiters, uint64_t packed, Duration after = Duration::zero()) {
  std::thread waiter([&] { CHECK(waiters.wait_durable(packed).ok()); });
  while (waiters.waiting() < 1) std::this_thread::yield();
  std::this_thread::sleep_for(after);
  waiters.advance(packed + 1, SteadyClock::now());
  waiter.join();
}

uint64_t spins(const DurableWaiters& waiters) { return waiters.spin_counters().spins.load(); }

TEST_CASE("spin wait: a lone thread spins after one-mutation flushes while its waits are short") {
  // A limit far above a hand-off on a loaded machine, yet short to miss once.
  DurableWaiters waiters(*real_clock(), 100ms);
  lone_wait(waiters, 10);  // no flush noted yet
  CHECK(spins(waiters) == 0);
  waiters.note_flush(1);
  lone_wait(waiters, 20);
  CHECK(spins(waiters) == 1);
  waiters.note_flush(3);  // flushes of several mutations: the CPU is the others'
  lone_wait(waiters, 30);
  CHECK(spins(waiters) == 1);

  waiters.note_flush(1);
  lone_wait(waiters, 40, 500ms);  // spins, misses, sleeps: a wait longer than the limit
  CHECK(spins(waiters) == 2);
  CHECK(waiters.spin_counters().missed.load() == 1);
  lone_wait(waiters, 50);  // so this one sleeps at once
  CHECK(spins(waiters) == 2);
  lone_wait(waiters, 60);  // one wait of back-off after one spin that ran out
  CHECK(spins(waiters) == 2);
  lone_wait(waiters, 70);  // then it spins again
  CHECK(spins(waiters) == 3);
}

// A waiter whose spins run out (the thread it waits for cannot run meanwhile)
// spins ever more rarely: after the n-th such spin in a row, 2^n - 1 waits
// sleep; one spin that ends in time starts the count again.
TEST_CASE("spin wait: spins that run out back off, doubling, until one ends in time") {
  DurableWaiters waiters(*real_clock(), 100ms);
  waiters.note_flush(1);
  uint64_t packed = 10;
  const auto spin_runs_out = [&] {
    lone_wait(waiters, packed += 10, 500ms);
    lone_wait(waiters, packed += 10);  // its last wait was long: sleeps
  };
  const auto short_waits = [&](int n) {
    for (int i = 0; i < n; ++i) lone_wait(waiters, packed += 10);
  };
  lone_wait(waiters, packed += 10);
  CHECK(spins(waiters) == 1);
  spin_runs_out();
  short_waits(1);
  CHECK(spins(waiters) == 2);
  spin_runs_out();  // the second in a row
  short_waits(3);
  CHECK(spins(waiters) == 3);
  CHECK(waiters.spin_counters().missed.load() == 2);
  short_waits(1);  // spins, in time
  CHECK(spins(waiters) == 4);
  spin_runs_out();  // the first in a row again: one wait of back-off, not seven
  short_waits(1);
  CHECK(spins(waiters) == 5);
  short_waits(1);
  CHECK(spins(waiters) == 6);
  CHECK(waiters.spin_counters().missed.load() == 3);
}

TEST_CASE("spin wait: a thread that is not alone, or a zero limit, never spins") {
  DurableWaiters waiters(*real_clock(), 5ms);
  std::thread first([&] { CHECK(waiters.wait_durable(30).ok()); });  // no flush noted: sleeps
  while (waiters.waiting() < 1) std::this_thread::yield();
  std::this_thread::sleep_for(500ms);  // past its decision not to spin
  waiters.note_flush(1);
  std::thread second([&] { CHECK(waiters.wait_durable(20).ok()); });
  while (waiters.waiting() < 2) std::this_thread::yield();
  // Only the second is released: however late it decides, the first still
  // waits beside it.
  waiters.advance(21, SteadyClock::now());
  second.join();
  waiters.advance(31, SteadyClock::now());
  first.join();
  CHECK(spins(waiters) == 0);

  DurableWaiters never(*real_clock());
  never.note_flush(1);
  lone_wait(never, 10);
  lone_wait(never, 20);
  CHECK(spins(never) == 0);
}

// A lone producer on batch spins through each hand-off. 10ms is far above any
// flush here, so every wait after the first two qualifies unless a busy
// machine (a sanitizer build beside another test on two CPUs) preempts the
// sync thread past the limit.
MetricsSnapshot lone_producer_run(Duration spin_wait) {
  testing::TempDir dir;
  Options options;
  options.directory = dir.path();
  options.sync_policy = "batch";
  options.spin_wait = spin_wait;
  auto log = CommitLog::open(options);
  REQUIRE(log.ok());
  for (int i = 0; i < 100; ++i) REQUIRE((*log)->append(1, std::string(100, 'x')).ok());
  return (*log)->metrics();
}

int usable_cpus() {
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  return ::sched_getaffinity(0, sizeof cpus, &cpus) == 0 ? CPU_COUNT(&cpus) : 1;
}

TEST_CASE(
    "spin wait: a lone producer spins instead of sleeping, unless turned off" *
    doctest::skip(usable_cpus() < 2)) {
  // At most once per append: about 98 when nothing preempts the sync thread;
  // a run that a loaded machine disturbed is run again, up to five times.
  const auto spun_through = [](const MetricsSnapshot& m) {
    return m.spins > 50 && m.spins_missed * 10 <= m.spins;
  };
  MetricsSnapshot spun = lone_producer_run(10ms);
  for (int run = 1; run < 5 && !spun_through(spun); ++run) spun = lone_producer_run(10ms);
  CHECK(spun.mutations_completed == 100);
  CHECK(spun.spins > 50);
  CHECK(spun.spins <= 100);
  CHECK(spun.spins_missed * 10 <= spun.spins);
  CHECK(spun.spin_nanos > 0);
  const MetricsSnapshot slept = lone_producer_run(Duration::zero());
  CHECK(slept.mutations_completed == 100);
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
