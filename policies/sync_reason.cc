// SPDX-License-Identifier: Apache-2.0
#include <iterator>

#include "commitlog/sync_policy.h"

namespace commitlog {
namespace {

// In SyncReason's order.
constexpr const char* kNames[] = {"producer_request", "window",   "period",   "marker",
                                  "segment_switch",   "explicit", "shutdown", "adaptive"};
static_assert(std::size(kNames) == kSyncReasons);

}  // namespace

const char* sync_reason_name(SyncReason reason) {
  const auto index = static_cast<size_t>(reason);
  return index < kSyncReasons ? kNames[index] : "unknown";
}

}  // namespace commitlog
