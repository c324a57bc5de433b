// SPDX-License-Identifier: Apache-2.0
#include "policies/group_hold.h"

#include <algorithm>
#include <cmath>

namespace commitlog {
namespace {

using Nanos = std::chrono::duration<double, std::nano>;

// Released producers not back by kLateFactor * R are late: stop holding. R
// averages the last return of each flush's group, and the groups differ (the
// slowest producer is not in every one), so the slowest can take a few R.
constexpr double kLateFactor = 3.0;

Duration ceil_nanos(double nanos) { return std::chrono::ceil<Duration>(Nanos(nanos)); }

double wait_until_back(const GroupHoldState& s) {
  const TimePoint back = s.released_at + ceil_nanos(s.back_after_ns);
  return std::max(0.0, Nanos(back - s.now).count());
}

}  // namespace

std::optional<TimePoint> hold_group_until(const GroupHoldState& s) {
  if (s.pending == 0 || s.group == 0) return std::nullopt;
  const double d = wait_until_back(s);
  const TimePoint late = s.released_at + ceil_nanos(kLateFactor * s.back_after_ns);
  const TimePoint at = std::min(s.released_at + std::min(s.cap, ceil_nanos(s.sync_ns)), late);
  const bool gains = static_cast<double>(s.pending) * s.sync_ns > static_cast<double>(s.group) * d;
  if (!gains || at <= s.now) return std::nullopt;
  return at;
}

uint64_t returns_to_end_hold(const GroupHoldState& s) {
  const double d = wait_until_back(s);
  const double k = (static_cast<double>(s.pending) * s.sync_ns - static_cast<double>(s.group) * d) /
                   (s.sync_ns + d);
  return std::min(s.pending, static_cast<uint64_t>(std::max(0.0, std::ceil(k))));
}

}  // namespace commitlog
