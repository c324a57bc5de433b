// SPDX-License-Identifier: Apache-2.0
// The real clock: the only place the library reads the time.
#include "commitlog/clock.h"

namespace commitlog {
namespace {

class RealClock final : public Clock {
 public:
  TimePoint now() const override { return std::chrono::steady_clock::now(); }
  uint64_t wall_micros() const override {
    return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                     std::chrono::system_clock::now().time_since_epoch())
                                     .count());
  }
  TimePoint wake_by_itself_at(TimePoint deadline) const override { return deadline; }
  // Its sleeps end by themselves: nobody needs telling that time moved.
  void add_sleeper(Sleeper&) override {}
  void remove_sleeper(Sleeper&) override {}
};

}  // namespace

Clock* real_clock() {
  static RealClock* const clock = new RealClock;
  return clock;
}

}  // namespace commitlog
