// The CPU meter the adaptive policy reads (commitlog/cpu_meter.h). It measures
// the process's real CPU time, so the test burns some and reads it back; the
// span rule is checked with explicit times.
#include <doctest/doctest.h>

#include <time.h>

#include <chrono>
#include <cstdint>

#include "commitlog/cpu_meter.h"

namespace commitlog {
namespace {

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Keeps this thread on a CPU for `seconds` of its own CPU time.
void burn_cpu(double seconds) {
  const double until = thread_cpu_seconds() + seconds;
  volatile uint64_t sink = 0;
  while (thread_cpu_seconds() < until) sink = sink + 1;
}

TEST_CASE("cpu meter: samples less than 1 ms apart change nothing; a longer span counts the CPU used") {
  CpuMeter meter;
  const TimePoint start = SteadyClock::now();
  burn_cpu(0.003);
  // Less than 1 ms of wall time since construction, by the times given: merged.
  CHECK(meter.sample(start + std::chrono::microseconds(500)) == 0.0);
  // The span since construction: at least 3 ms of CPU, a share above 0 even
  // averaged in at a quarter and spread over every usable CPU.
  const TimePoint later = SteadyClock::now();
  const double busy = meter.sample(later);
  CHECK(busy > 0.0);
  CHECK(busy <= 1.0);
  // Half a millisecond later, with CPU used in between: merged into the next span.
  burn_cpu(0.0004);
  CHECK(meter.sample(later + std::chrono::microseconds(500)) == busy);
  // Once a span reaches 1 ms it is averaged in.
  burn_cpu(0.002);
  CHECK(meter.sample(SteadyClock::now()) != busy);
}

}  // namespace
}  // namespace commitlog
