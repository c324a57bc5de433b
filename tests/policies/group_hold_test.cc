// SPDX-License-Identifier: Apache-2.0
// The group hold rule (policies/group_hold.h), which the adaptive policy and
// commitlog-kv's worker threads share.
#include <doctest/doctest.h>

#include <chrono>

#include "policies/group_hold.h"

namespace commitlog {
namespace {

using namespace std::chrono_literals;

// A flush just released 10 producers; 2 are back. Flushes take 1 ms, the
// released come back 200 µs after a flush, the cap is 2 ms.
GroupHoldState state() {
  GroupHoldState s;
  s.released_at = TimePoint(1s);
  s.now = s.released_at + 50us;
  s.pending = 8;
  s.group = 2;
  s.sync_ns = 1e6;
  s.back_after_ns = 200e3;
  s.cap = 2ms;
  return s;
}

TEST_CASE("group hold: holds for the released while it pays, until a flush time after the release") {
  const GroupHoldState s = state();
  const auto until = hold_group_until(s);
  REQUIRE(until.has_value());
  CHECK(*until == s.released_at + 600us);  // 3 R comes before min(cap, S)
}

TEST_CASE("group hold: never past the cap or one flush time") {
  GroupHoldState s = state();
  s.back_after_ns = 5e6;  // they come back late: 3 R is far
  s.pending = 1000;       // and waiting would still pay
  CHECK(hold_group_until(s) == s.released_at + 1ms);
  s.cap = 300us;
  CHECK(hold_group_until(s) == s.released_at + 300us);
  s.cap = Duration::zero();
  CHECK_FALSE(hold_group_until(s).has_value());
}

TEST_CASE("group hold: flushes at once when nobody is pending, or waiting does not pay") {
  GroupHoldState s = state();
  s.pending = 0;
  CHECK_FALSE(hold_group_until(s).has_value());
  s = state();
  s.group = 0;
  CHECK_FALSE(hold_group_until(s).has_value());
  s = state();
  // d = 150 µs: 8 pending x 1 ms <= 60 waiting x 150 µs.
  s.group = 60;
  CHECK_FALSE(hold_group_until(s).has_value());
  s = state();
  s.now = s.released_at + 700us;  // past 3 R
  CHECK_FALSE(hold_group_until(s).has_value());
}

TEST_CASE("group hold: the returns that end a hold turn the rule to flush now") {
  GroupHoldState s = state();
  s.group = 10;
  const uint64_t k = returns_to_end_hold(s);
  REQUIRE(k > 0);
  REQUIRE(k <= s.pending);
  GroupHoldState after = s;
  after.pending -= k;
  after.group += k;
  CHECK_FALSE(hold_group_until(after).has_value());
  GroupHoldState before = s;
  before.pending -= k - 1;
  before.group += k - 1;
  CHECK(hold_group_until(before).has_value());
}

}  // namespace
}  // namespace commitlog
