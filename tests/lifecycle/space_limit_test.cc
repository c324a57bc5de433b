// SPDX-License-Identifier: Apache-2.0
// The hard limit on the log's size: the throttle's curve, then the log
// slowing producers near the limit, blocking them at it, timing out an append
// with a deadline, and letting a blocked producer go once segments are
// discarded and deleted. No assertion depends on how fast the machine is.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include <boost/fiber/all.hpp>

#include "commitlog/commit_log.h"
#include "commitlog/lifecycle/space_throttle.h"
#include "tests/support/eventually.h"
#include "tests/support/temp_dir.h"

namespace commitlog {
namespace {
using testing::eventually;

using namespace std::chrono_literals;
using testing::TempDir;

constexpr uint64_t kLimitedSegmentSize = 64 << 10;
const std::string kLimitedPayload(1000, 'p');

TEST_CASE("throttle: no delay below 90% of the limit, a growing delay up to the limit, a wait at it") {
  std::atomic<uint64_t> bytes{0};
  SpaceThrottle throttle(*real_clock(), 1000, 10ms, [&] { return bytes.load(); });
  CHECK(throttle.delay_for(0) == Duration::zero());
  CHECK(throttle.delay_for(899) == Duration::zero());
  CHECK(throttle.delay_for(900) == Duration::zero());
  const Duration d925 = *throttle.delay_for(925), d950 = *throttle.delay_for(950), d999 = *throttle.delay_for(999);
  CHECK(d925 > Duration::zero());
  CHECK(d925 < d950);
  CHECK(d950 < d999);
  CHECK(d999 <= Duration(10ms));
  CHECK(std::chrono::abs(d950 - Duration(5ms)) < Duration(1us));
  CHECK_FALSE(throttle.delay_for(1000).has_value());

  bytes = 950;
  REQUIRE(throttle.admit(kNoDeadline).ok());
  CHECK(throttle.counters().delayed == 1);
  bytes = 1000;
  CHECK(throttle.admit(SteadyClock::now() + 5ms).code() == ErrorCode::kTimedOut);
  CHECK(throttle.counters().timeouts == 1);
  CHECK(throttle.admit(SteadyClock::now() - 1s).code() == ErrorCode::kTimedOut);

  std::atomic<bool> admitted{false};
  std::thread waiter([&] {
    REQUIRE(throttle.admit(kNoDeadline).ok());
    admitted = true;
  });
  REQUIRE(eventually([&] { return throttle.counters().waiting == 1; }));
  CHECK_FALSE(admitted.load());
  bytes = 10;
  throttle.release();
  waiter.join();
  CHECK(admitted.load());

  bytes = 5000;
  std::thread closed([&] { CHECK(throttle.admit(kNoDeadline).code() == ErrorCode::kClosed); });
  REQUIRE(eventually([&] { return throttle.counters().waiting == 1; }));
  throttle.close();
  closed.join();
}

TEST_CASE("throttle: a waiting fiber suspends only itself") {
  std::atomic<uint64_t> bytes{2000};
  SpaceThrottle throttle(*real_clock(), 1000, 1ms, [&] { return bytes.load(); });
  bool other_ran = false;
  boost::fibers::fiber waiting([&] { REQUIRE(throttle.admit(kNoDeadline).ok()); });
  boost::fibers::fiber other([&] {
    other_ran = true;
    bytes = 0;
    throttle.release();
  });
  waiting.join();
  other.join();
  CHECK(other_ran);
}

Options limited_log(const std::string& dir) {
  Options options;
  options.directory = dir;
  options.sync_policy = "periodic";
  options.segment_size = kLimitedSegmentSize;
  options.total_space_hard_limit = 4 * kLimitedSegmentSize;
  options.total_space_max_delay = 2ms;
  return options;
}

TEST_CASE("hard limit: appends are slowed, then blocked, a deadline returns kTimedOut, discard frees them") {
  TempDir dir;
  auto opened = CommitLog::open(limited_log(dir.path()));
  REQUIRE(opened.ok());
  CommitLog& log = **opened;

  Position last;
  Status refused;
  int appended = 0;
  uint64_t delayed_before_refusal = 0;
  for (; appended < 10000; ++appended) {
    const uint64_t delayed = log.metrics().throttled_appends;
    auto p = log.append(1, kLimitedPayload, {.deadline = SteadyClock::now() + 50ms});
    if (!p.ok()) {
      refused = p.status();
      delayed_before_refusal = delayed;
      break;
    }
    last = *p;
  }
  CHECK(refused.code() == ErrorCode::kTimedOut);
  CHECK(delayed_before_refusal > 0);  // slowed before it blocked
  CHECK(appended > 150);              // about 3.6 segments went in
  const MetricsSnapshot m = log.metrics();
  CHECK(m.space_timeouts == 1);
  CHECK(m.throttled_appends > 0);
  CHECK(m.total_log_bytes >= 4 * kLimitedSegmentSize);

  std::atomic<bool> done{false};
  Status blocked_status;
  std::thread blocked([&] {
    blocked_status = log.append(1, kLimitedPayload).status();
    done = true;
  });
  REQUIRE(eventually([&] { return log.metrics().producers_waiting_for_space == 1; }));
  CHECK_FALSE(done.load());
  REQUIRE(log.discard(1, last).ok());
  blocked.join();
  CHECK(blocked_status.ok());
  CHECK(log.metrics().segments_deleted >= 3);
  CHECK(log.append(1, kLimitedPayload, {.deadline = SteadyClock::now()}).ok());  // far below the limit again

  REQUIRE(log.close().ok());
}

TEST_CASE("hard limit: close wakes a producer waiting for space with kClosed") {
  TempDir dir;
  auto opened = CommitLog::open(limited_log(dir.path()));
  REQUIRE(opened.ok());
  CommitLog& log = **opened;
  while (log.append(1, kLimitedPayload, {.deadline = SteadyClock::now() + 20ms}).ok()) {
  }
  Status status;
  std::thread blocked([&] { status = log.append(1, kLimitedPayload).status(); });
  REQUIRE(eventually([&] { return log.metrics().producers_waiting_for_space == 1; }));
  log.close().ignore();
  blocked.join();
  CHECK(status.code() == ErrorCode::kClosed);
}

TEST_CASE("hard limit: must be at least two segments and at least total_space") {
  TempDir dir;
  Options options = limited_log(dir.path());
  options.total_space_hard_limit = kLimitedSegmentSize;
  CHECK(CommitLog::open(options).status().code() == ErrorCode::kInvalidArgument);
  options.total_space_hard_limit = 4 * kLimitedSegmentSize;
  options.total_space = 8 * kLimitedSegmentSize;
  CHECK(CommitLog::open(options).status().code() == ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace commitlog
