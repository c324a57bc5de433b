// SPDX-License-Identifier: Apache-2.0
#include "commitlog/sync_policy.h"

namespace commitlog {

const char* sync_reason_name(SyncReason reason) {
  switch (reason) {
    case SyncReason::kProducerRequest: return "producer_request";
    case SyncReason::kWindow: return "window";
    case SyncReason::kPeriod: return "period";
    case SyncReason::kMarker: return "marker";
    case SyncReason::kSegmentSwitch: return "segment_switch";
    case SyncReason::kExplicit: return "explicit";
    case SyncReason::kShutdown: return "shutdown";
    case SyncReason::kAdaptive: return "adaptive";
  }
  return "unknown";
}

}  // namespace commitlog
