#include "commitlog/cpu_meter.h"

#include <sched.h>
#include <time.h>

#include <algorithm>

namespace commitlog {
namespace {

double process_cpu_seconds() {
  timespec ts{};
  if (::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0) return 0;
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// The CPUs this process may run on (its affinity mask, as taskset or a
// container's cpuset leave it), not the machine's.
int usable_cpus() {
  cpu_set_t set;
  if (::sched_getaffinity(0, sizeof(set), &set) != 0) return 1;
  return std::max(1, CPU_COUNT(&set));
}

}  // namespace

CpuMeter::CpuMeter()
    : cpus_(usable_cpus()), since_(SteadyClock::now()), cpu_seconds_since_(process_cpu_seconds()) {}

// The clock_gettime() below sums the time of every thread of the process
// (0.7 us p50 here). A lone producer is woken onto the sync thread's CPU and
// runs once that thread sleeps (97-99% of wake-ups, docs/benchmarks.md), so
// each call after a flush lengthens its append by as much: hence at most one
// per millisecond, not one per flush.
constexpr double kMinSpanSeconds = 1e-3;

double CpuMeter::sample(TimePoint now) {
  const double wall = std::chrono::duration<double>(now - since_).count();
  if (wall < kMinSpanSeconds) return busy_;
  const double cpu = process_cpu_seconds();
  const double busy = std::clamp((cpu - cpu_seconds_since_) / (wall * cpus_), 0.0, 1.0);
  busy_ += (busy - busy_) / 4;  // the weight of the policy's averages
  since_ = now;
  cpu_seconds_since_ = cpu;
  return busy_;
}

}  // namespace commitlog
