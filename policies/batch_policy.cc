// SPDX-License-Identifier: Apache-2.0
// batch: every producer asks for a sync and waits for it. Syncs run back to
// back; whoever arrives during one rides the next, so the group size grows by
// itself with the load (Cassandra's BatchCommitLogService).
#include "policies/builtin.h"

namespace commitlog {
namespace {

class BatchPolicy final : public SyncPolicy {
 public:
  std::string_view name() const override { return "batch"; }
  ProducerAction after_append(const ProducerView&) const override {
    return ProducerAction::kRequestSyncAndWait;
  }
  // A request that finds everything flushed asks for nothing: its producer
  // asked after the flush that covers it had begun.
  SyncPlan plan(const SyncState& s) override {
    if (s.has_unflushed && (s.sync_requested || s.waiting_producers > 0)) {
      return {SyncPlan::Kind::kFlush, s.now, SyncReason::kProducerRequest};
    }
    return {};
  }
};

}  // namespace

Result<std::unique_ptr<SyncPolicy>> make_batch_policy(const PolicySettings&) {
  return std::unique_ptr<SyncPolicy>(new BatchPolicy);
}

}  // namespace commitlog
