// SPDX-License-Identifier: Apache-2.0
// The one moving average of the library: the policies' estimates (flush
// time, producers' return, arrival rate) and the flush pipeline's (staging
// and commit times) all follow load the same way.
#pragma once

#include "commitlog/clock.h"

namespace commitlog {

// An exponentially weighted moving average, unknown until its first sample.
// About the last 4 samples count, so a change of load is followed within a
// few flushes and one slow fdatasync is smoothed.
class MovingAverage {
 public:
  static constexpr double kWeight = 0.25;
  void add(double sample) { value_ = known() ? value_ + kWeight * (sample - value_) : sample; }
  void add(Duration sample) { add(static_cast<double>(sample.count())); }  // in ns
  bool known() const { return value_ >= 0; }
  double value() const { return value_; }
  // The value as a duration of that many ns; zero while unknown.
  Duration duration() const { return known() ? Duration(static_cast<int64_t>(value_)) : Duration::zero(); }

 private:
  double value_ = -1;
};

}  // namespace commitlog
