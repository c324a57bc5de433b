// SPDX-License-Identifier: Apache-2.0
// periodic: producers return at once. The sync thread flushes every period and
// writes a marker about every marker interval in between, so a process crash
// (not a power loss) loses at most about one marker interval. Producers block
// only while the last completed flush started more than lag_block ago
// (Cassandra's PeriodicCommitLogService). A producer that waits for
// durability on its own terms (AppendWait::kDurable, wait_durable()) asks
// for a sync, and the flush starts at once: it waits about one flush, not
// the rest of the period, and producers that ask during a flush ride the
// next, as with batch.
#include <algorithm>

#include "policies/builtin.h"

namespace commitlog {
namespace {

class PeriodicPolicy final : public SyncPolicy {
 public:
  PeriodicPolicy(Duration period, Duration marker_interval, Duration lag_block)
      : period_(period), marker_interval_(marker_interval), lag_block_(lag_block) {}
  std::string_view name() const override { return "periodic"; }
  ProducerAction after_append(const ProducerView& v) const override {
    return v.now - v.last_flush_started > lag_block_ ? ProducerAction::kWaitForSyncToCatchUp
                                                     : ProducerAction::kReturn;
  }
  SyncPlan plan(const SyncState& s) override {
    if (s.sync_requested) return {SyncPlan::Kind::kFlush, s.now, SyncReason::kProducerRequest};
    // The flush runs even when nothing was written: its start time is what
    // producers compare with lag_block.
    SyncPlan flush{SyncPlan::Kind::kFlush, s.last_flush_started + period_, SyncReason::kPeriod};
    if (!s.has_unsealed) return flush;
    SyncPlan marker{SyncPlan::Kind::kSeal, s.last_seal + marker_interval_, SyncReason::kMarker};
    return marker.at < flush.at ? marker : flush;
  }
  PolicyPromise promise() const override { return {.acknowledges_durable = false}; }

 private:
  const Duration period_, marker_interval_, lag_block_;
};

}  // namespace

Result<std::unique_ptr<SyncPolicy>> make_periodic_policy(const PolicySettings& settings) {
  if (settings.sync_period <= Duration::zero()) {
    return Status::invalid_argument(
        "commitlog_sync_period must be greater than 0 when commitlog_sync is periodic");
  }
  Duration marker = std::min(settings.marker_interval, settings.sync_period);
  return std::unique_ptr<SyncPolicy>(new PeriodicPolicy(settings.sync_period, marker, settings.lag_block));
}

}  // namespace commitlog
