// SPDX-License-Identifier: Apache-2.0
#include "commitlog/util/test_points.h"

#include <atomic>
#include <mutex>
#include <utility>

namespace commitlog {
namespace {

std::atomic<bool> observed{false};

std::mutex& observer_mutex() {
  static std::mutex mu;
  return mu;
}

TestPointObserver& observer() {
  static TestPointObserver fn;
  return fn;
}

}  // namespace

void set_test_point_observer(TestPointObserver fn) {
  std::lock_guard lock(observer_mutex());
  observed.store(static_cast<bool>(fn), std::memory_order_relaxed);
  observer() = std::move(fn);
}

void reach_test_point(std::string_view point) {
  if (!observed.load(std::memory_order_relaxed)) return;
  std::lock_guard lock(observer_mutex());
  if (observer()) observer()(point);
}

}  // namespace commitlog
