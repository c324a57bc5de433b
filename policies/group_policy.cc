// SPDX-License-Identifier: Apache-2.0
// group: producers wait without asking; the sync thread flushes at most once
// per window (Cassandra's GroupCommitLogService). A producer waits at most the
// rest of the current window plus one flush.
#include "policies/builtin.h"

namespace commitlog {
namespace {

class GroupPolicy final : public SyncPolicy {
 public:
  explicit GroupPolicy(Duration window) : window_(window) {}
  std::string_view name() const override { return "group"; }
  ProducerAction after_append(const ProducerView&) const override {
    return ProducerAction::kWaitDurable;
  }
  SyncPlan plan(const SyncState& s) override {
    if (!s.has_unflushed) return {};
    return {SyncPlan::Kind::kFlush, s.last_flush_started + window_, SyncReason::kWindow};
  }
  PolicyPromise promise() const override { return {.max_added_delay = window_}; }

 private:
  const Duration window_;
};

}  // namespace

Result<std::unique_ptr<SyncPolicy>> make_group_policy(const PolicySettings& settings) {
  if (settings.group_window <= Duration::zero()) {
    return Status::invalid_argument(
        "commitlog_sync_group_window must be greater than 0 when commitlog_sync is group");
  }
  return std::unique_ptr<SyncPolicy>(new GroupPolicy(settings.group_window));
}

}  // namespace commitlog
