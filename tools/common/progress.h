// SPDX-License-Identifier: Apache-2.0
// A progress bar on stderr for work measured in bytes.
//
// It draws only when stderr is a terminal, and only once the work has run for
// about a second, so quick runs and redirected stderr see nothing extra. The
// bar is erased when the object is finished or destroyed, before any summary
// is printed. update() is cheap enough to call once per mutation.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace commitlog::tools {

class Progress {
 public:
  // `total`: bytes of work expected; `label`: what is being done ("replay").
  Progress(std::string label, uint64_t total);
  ~Progress() { finish(); }
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // `done` bytes of the total are finished.
  void update(uint64_t done) {
    if (enabled_ && done >= next_check_) check(done);
  }
  // Erases the bar, if one was drawn. Idempotent.
  void finish();

 private:
  void check(uint64_t done);
  void draw(uint64_t done);

  using Clock = std::chrono::steady_clock;
  std::string label_;
  uint64_t total_;
  bool enabled_;
  bool drawn_ = false;
  uint64_t next_check_ = 0;  // bytes: look at the clock again once this far
  Clock::time_point start_;
  Clock::time_point next_draw_;
};

}  // namespace commitlog::tools
