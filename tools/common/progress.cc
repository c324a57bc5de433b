// SPDX-License-Identifier: Apache-2.0
#include "tools/common/progress.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include <fmt/core.h>

namespace commitlog::tools {
namespace {

constexpr auto kDelay = std::chrono::seconds(1);
constexpr auto kRedraw = std::chrono::milliseconds(100);
constexpr uint64_t kCheckEvery = 1u << 20;  // bytes between clock reads
constexpr int kWidth = 30;

}  // namespace

Progress::Progress(std::string label, uint64_t total)
    : label_(std::move(label)),
      total_(std::max<uint64_t>(total, 1)),
      enabled_(::isatty(STDERR_FILENO) == 1),
      start_(Clock::now()),
      next_draw_(start_ + kDelay) {}

void Progress::check(uint64_t done) {
  next_check_ = done + kCheckEvery;
  const auto now = Clock::now();
  if (now < next_draw_) return;
  next_draw_ = now + kRedraw;
  draw(done);
}

void Progress::draw(uint64_t done) {
  done = std::min(done, total_);
  const double fraction = static_cast<double>(done) / static_cast<double>(total_);
  const int filled = static_cast<int>(fraction * kWidth);
  const double seconds = std::chrono::duration<double>(Clock::now() - start_).count();
  const double mb = static_cast<double>(done) / 1e6;
  fmt::print(stderr, "\r{} [{:#<{}}{:.<{}}] {:3.0f}%  {:.0f}/{:.0f} MB  {:.0f} MB/s\x1b[K", label_, "",
             filled, "", kWidth - filled, fraction * 100, mb, static_cast<double>(total_) / 1e6,
             seconds > 0 ? mb / seconds : 0.0);
  std::fflush(stderr);
  drawn_ = true;
}

void Progress::finish() {
  if (drawn_) {
    fmt::print(stderr, "\r\x1b[K");
    std::fflush(stderr);
  }
  drawn_ = false;
  enabled_ = false;
}

}  // namespace commitlog::tools
