// SPDX-License-Identifier: Apache-2.0
#include "tests/support/loop_points.h"

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>

#include "commitlog/util/test_points.h"

namespace commitlog::testing {
namespace {

struct LoopStates {
  std::mutex mu;
  std::condition_variable changed;
  std::map<std::string, bool, std::less<>> asleep;  // by loop: its last point

  LoopStates() {
    set_test_point_observer([this](std::string_view point) {
      const size_t colon = point.find(": ");
      if (colon == std::string_view::npos) return;
      {
        std::lock_guard lock(mu);
        asleep[std::string(point.substr(0, colon))] = point.substr(colon + 2) == "asleep";
      }
      changed.notify_all();
    });
  }
};

// Installed before main, so no sleep of any log is missed.
LoopStates& states() {
  static LoopStates s;
  return s;
}
[[maybe_unused]] const bool installed = (states(), true);

bool await_last_point(std::string_view loop, bool asleep) {
  LoopStates& s = states();
  std::unique_lock lock(s.mu);
  return s.changed.wait_for(lock, std::chrono::seconds(5), [&] {
    const auto it = s.asleep.find(loop);
    return it != s.asleep.end() && it->second == asleep;
  });
}

}  // namespace

bool await_asleep(std::string_view loop) { return await_last_point(loop, true); }
bool await_awake(std::string_view loop) { return await_last_point(loop, false); }

}  // namespace commitlog::testing
