// Public API. The log's time vocabulary: every duration and point in time the
// library takes or reports is on the steady clock.
#pragma once

#include <chrono>

namespace commitlog {

using SteadyClock = std::chrono::steady_clock;
using TimePoint = SteadyClock::time_point;
using Duration = SteadyClock::duration;

}  // namespace commitlog
