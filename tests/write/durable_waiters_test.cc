// SPDX-License-Identifier: Apache-2.0
// Producers on plain threads wait for the durable watermark on a futex word
// (DurableWaiters, FutexWord): each wakes once its entry is durable, or with
// the error of a failed flush, and never sleeps through a wake-up. Producers
// on fibers count as waiting until they run.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include <boost/fiber/fiber.hpp>
#include <boost/fiber/operations.hpp>

#include "commitlog/write/durable_waiters.h"
#include "commitlog/util/futex_word.h"

namespace commitlog {
namespace {

using namespace std::chrono_literals;

void wait_until_waiting(const DurableWaiters& waiters, size_t count) {
  while (waiters.waiting() < count) std::this_thread::yield();
}

TEST_CASE("futex word: a wait returns once the word moves, and at once if it already has") {
  FutexWord word(*real_clock());
  word.wait(1);  // the word is 0: no sleep
  std::atomic<int> woken{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&] {
      while (word.load() == 0) word.wait(0);
      woken.fetch_add(1);
    });
  }
  std::this_thread::sleep_for(20ms);
  CHECK(woken.load() == 0);
  word.fetch_add(1);
  word.wake_all();
  for (std::thread& t : threads) t.join();
  CHECK(woken.load() == 4);
  CHECK_FALSE(word.compare_exchange(0, 5));
  CHECK(word.compare_exchange(1, 5));
  CHECK(word.load() == 5);
}

TEST_CASE("durable waiters: plain threads wake when their entry is durable, not before") {
  DurableWaiters waiters(*real_clock());
  constexpr int kThreads = 8;
  std::atomic<int> done{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      const Status status = waiters.wait_durable(DurableWaiters::pack(1, 100 * (i + 1)));
      CHECK(status.ok());
      done.fetch_add(1);
    });
  }
  wait_until_waiting(waiters, kThreads);
  waiters.advance(DurableWaiters::pack(1, 450), SteadyClock::now());  // covers 100..400
  while (done.load() < 4) std::this_thread::yield();
  std::this_thread::sleep_for(20ms);
  CHECK(done.load() == 4);
  CHECK(waiters.waiting() == kThreads - 4);
  waiters.advance(DurableWaiters::pack(2, 0), SteadyClock::now());
  for (std::thread& t : threads) t.join();
  CHECK(done.load() == kThreads);
  CHECK(waiters.waiting() == 0);
}

TEST_CASE("durable waiters: a fiber a flush released counts as waiting until it runs") {
  // The adaptive policy reads waiting() beyond the pending group as the
  // producers queued for the CPU (policies/adaptive_policy.cc).
  DurableWaiters waiters(*real_clock());
  int done = 0;
  std::vector<boost::fibers::fiber> fibers;
  for (int i = 0; i < 3; ++i) {
    fibers.emplace_back([&] {
      CHECK(waiters.wait_durable(DurableWaiters::pack(1, 10)).ok());
      ++done;
    });
  }
  while (waiters.waiting() < 3) boost::this_fiber::yield();
  waiters.advance(DurableWaiters::pack(1, 20), SteadyClock::now());
  CHECK(waiters.durable(DurableWaiters::pack(1, 10)));
  CHECK(waiters.waiting() == 3);  // released; this thread has not run them yet
  CHECK(done == 0);
  for (boost::fibers::fiber& f : fibers) f.join();
  CHECK(done == 3);
  CHECK(waiters.waiting() == 0);
}

TEST_CASE("durable waiters: a failed round's error reaches the threads waiting, not later ones") {
  DurableWaiters waiters(*real_clock());
  Status seen;
  std::thread waiter([&] { seen = waiters.wait_durable(DurableWaiters::pack(1, 10)); });
  wait_until_waiting(waiters, 1);
  waiters.fail_waiting(Status::io_error("fdatasync /log/1.log: injected"));
  waiter.join();
  CHECK(seen.code() == ErrorCode::kIoError);
  CHECK(seen.message().find("injected") != std::string::npos);

  std::thread later([&] { seen = waiters.wait_durable(DurableWaiters::pack(1, 20)); });
  wait_until_waiting(waiters, 1);
  waiters.advance(DurableWaiters::pack(1, 30), SteadyClock::now());
  later.join();
  CHECK(seen.ok());

  std::thread after_death([&] { seen = waiters.wait_durable(DurableWaiters::pack(1, 40)); });
  wait_until_waiting(waiters, 1);
  waiters.fail(Status::io_error("msync /log/1.log: dead"));
  after_death.join();
  CHECK(seen.code() == ErrorCode::kIoError);
  CHECK(waiters.wait_durable(DurableWaiters::pack(1, 50)).code() == ErrorCode::kIoError);
  CHECK(waiters.wait_durable(DurableWaiters::pack(1, 5)).ok());  // durable before the failure
}

}  // namespace
}  // namespace commitlog
