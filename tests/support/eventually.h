// SPDX-License-Identifier: Apache-2.0
// Polls for what a test cannot be told of directly: another thread reaching
// a wait, a background thread finishing its work.
#pragma once

#include <chrono>
#include <thread>

namespace commitlog::testing {

// Calls `done` until it returns true (then true) or until `limit` has
// passed (then false), sleeping 1 ms between calls.
template <typename Done>
bool eventually(Done done, std::chrono::milliseconds limit = std::chrono::seconds(60)) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

}  // namespace commitlog::testing
