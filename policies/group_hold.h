// SPDX-License-Identifier: Apache-2.0
// Holding a group open: whether the next flush should wait for the producers
// the last one released, who are expected to come back and ride it.
//
// Producers that wait for their flush before they append again split into
// two cohorts that take turns: those released by flush N come back while
// N+1 runs and wait for N+2, so each flush carries half of them. Holding
// N+1 until the released are back merges the cohorts, but it lengthens the
// cycle, so it pays only when they are expected back soon enough:
//   S        flush duration (moving average);
//   R        how long after a flush the last producer it released came back
//            (moving average);
//   F        when the last flush finished;
//   pending  released by it and not back yet;  g  the group waiting now;
//   d        max(0, F + R - now): the wait until they are expected back.
//   Flush now   if pending == 0, or pending * S <= g * d: waiting makes the
//               group (g + pending) / g times larger and the cycle (S + d) / S
//               times longer, so it pays only if pending / g > d / S.
//   Otherwise   hold until min(F + min(cap, S), F + kLateFactor * R): never
//               longer than a flush takes or the cap allows, and not for
//               stragglers far later than usual.
// The adaptive policy applies it to the log's producers (adaptive_policy.cc,
// docs/design.md); commitlog-kv to the connections one worker thread
// answered, before the thread waits for the log (tools/kv/durability.h),
// with the policy's max_added_delay as the cap.
//
// Thread-safety: plain values; the caller serializes.
#pragma once

#include <cstdint>
#include <optional>

#include "commitlog/clock.h"
#include "policies/moving_average.h"

namespace commitlog {

struct GroupHoldState {
  TimePoint now;
  TimePoint released_at;  // F
  uint64_t pending = 0;   // released by the last flush, not back yet
  uint64_t group = 0;     // g
  double sync_ns = 0;        // S
  double back_after_ns = 0;  // R
  Duration cap{};
};

// The end of the hold, or nullopt: flush now.
std::optional<TimePoint> hold_group_until(const GroupHoldState& s);

// Of the pending, how many more must come back (each one leaves `pending`
// and joins `group`) for hold_group_until() to say "flush now", with d as
// of s.now (d only shrinks, so this is never too late).
uint64_t returns_to_end_hold(const GroupHoldState& s);

}  // namespace commitlog
