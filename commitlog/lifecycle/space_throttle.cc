// SPDX-License-Identifier: Apache-2.0
#include "commitlog/lifecycle/space_throttle.h"

#include <algorithm>


namespace commitlog {

SpaceThrottle::SpaceThrottle(Clock& clock, uint64_t hard_limit, Duration max_delay,
                             Measure measure)
    : clock_(clock),
      hard_limit_(hard_limit),
      band_start_(hard_limit - hard_limit / 10),
      max_delay_(max_delay),
      measure_(std::move(measure)),
      clock_moves_(clock, [this] { release(); }) {}

std::optional<Duration> SpaceThrottle::delay_for(uint64_t bytes) const {
  if (bytes < band_start_) return Duration::zero();
  if (bytes >= hard_limit_) return std::nullopt;
  const double into_band = static_cast<double>(bytes - band_start_) /
                           static_cast<double>(hard_limit_ - band_start_);
  return Duration(static_cast<Duration::rep>(static_cast<double>(max_delay_.count()) * into_band));
}

Status SpaceThrottle::admit(TimePoint deadline) {
  if (hard_limit_ == 0) return {};
  if (closed_.load(std::memory_order_acquire)) return Status::closed("the commit log is closed");
  const std::optional<Duration> delay = delay_for(measure_());
  if (!delay) return wait_for_space(deadline);
  if (*delay == Duration::zero()) return {};
  const TimePoint start = clock_.now();
  const TimePoint until = deadline - start < *delay ? deadline : start + *delay;
  {
    std::unique_lock lock(mu_);
    wait_until(clock_, cv_, lock, until, [&] { return closed_.load(); });
  }
  delayed_.fetch_add(1, std::memory_order_relaxed);
  delay_nanos_.fetch_add(static_cast<uint64_t>((clock_.now() - start).count()),
                         std::memory_order_relaxed);
  return {};
}

Status SpaceThrottle::wait_for_space(TimePoint deadline) {
  const TimePoint start = clock_.now();
  bool timed_out = false;
  {
    std::unique_lock lock(mu_);
    waiting_.fetch_add(1);
    timed_out = !wait_until(clock_, cv_, lock, deadline,
                            [&] { return closed_.load() || measure_() < hard_limit_; });
    waiting_.fetch_sub(1);
  }
  waits_.fetch_add(1, std::memory_order_relaxed);
  wait_nanos_.fetch_add(static_cast<uint64_t>((clock_.now() - start).count()),
                        std::memory_order_relaxed);
  if (closed_.load()) return Status::closed("the commit log is closed");
  if (timed_out) {
    timeouts_.fetch_add(1, std::memory_order_relaxed);
    return Status::timed_out("the commit log is at commitlog_ext_total_space_hard_limit (" +
                             std::to_string(hard_limit_) + " bytes) and no space was freed in time");
  }
  return {};
}

void SpaceThrottle::release() {
  { std::lock_guard lock(mu_); }  // a producer between its check and its wait gets the notify
  cv_.notify_all();
}

void SpaceThrottle::close() {
  closed_.store(true);
  release();
}

ThrottleCounters SpaceThrottle::counters() const {
  ThrottleCounters c;
  c.delayed = delayed_.load(std::memory_order_relaxed);
  c.delay_nanos = delay_nanos_.load(std::memory_order_relaxed);
  c.waits = waits_.load(std::memory_order_relaxed);
  c.wait_nanos = wait_nanos_.load(std::memory_order_relaxed);
  c.timeouts = timeouts_.load(std::memory_order_relaxed);
  c.waiting = waiting_.load(std::memory_order_relaxed);
  return c;
}

}  // namespace commitlog
