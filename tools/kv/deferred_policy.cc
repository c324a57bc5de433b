#include "tools/kv/deferred_policy.h"

#include <algorithm>
#include <atomic>
#include <memory>

namespace commitlog::kv {
namespace {

// Set by after_append() on the appending thread, read right after the
// append returns. A fiber cannot be switched out between the two unless
// after_append() answered kWaitForSyncToCatchUp (which sets nothing); a
// stale `true` left by another fiber then costs one needless wait, never a
// missing one.
thread_local bool t_wait_owed = false;

class DeferredWaitPolicy final : public SyncPolicy {
 public:
  DeferredWaitPolicy(std::unique_ptr<SyncPolicy> inner, size_t appenders)
      : inner_(std::move(inner)), appenders_(appenders) {}

  std::string_view name() const override { return inner_->name(); }

  ProducerAction after_append(const ProducerView& view) const override {
    const ProducerAction action = inner_->after_append(view);
    switch (action) {
      case ProducerAction::kRequestSyncAndWait:
        requested_.store(true);
        t_wait_owed = true;
        return ProducerAction::kReturn;
      case ProducerAction::kWaitDurable: t_wait_owed = true; return ProducerAction::kReturn;
      case ProducerAction::kReturn:
      case ProducerAction::kWaitForSyncToCatchUp: break;
    }
    return action;
  }

  SyncPlan plan(const SyncState& state) override {
    SyncState s = state;
    s.sync_requested = s.sync_requested || requested_.load();
    SyncPlan plan = inner_->plan(s);
    if (plan.kind == SyncPlan::Kind::kFlush && plan.reason == SyncReason::kAdaptive &&
        s.waiting_producers >= appenders_) {
      plan.at = std::min(plan.at, s.now);
    }
    // The flush starts now: whoever asks from here on rides the next one.
    if (plan.kind == SyncPlan::Kind::kFlush && plan.at <= s.now) requested_.store(false);
    return plan;
  }

  void on_flush(Duration duration, size_t mutations) override {
    inner_->on_flush(duration, mutations);
  }

 private:
  const std::unique_ptr<SyncPolicy> inner_;
  const size_t appenders_;
  mutable std::atomic<bool> requested_{false};
};

}  // namespace

Result<std::string> register_deferred_policy(const std::string& name, size_t appenders) {
  PolicyRegistry& registry = PolicyRegistry::global();
  const std::string wrapped = "kv:" + name;
  for (const std::string& known : registry.names()) {
    if (known == wrapped) return wrapped;
  }
  Status added = registry.add(
      wrapped,
      [name, appenders](const PolicySettings& settings) -> Result<std::unique_ptr<SyncPolicy>> {
        auto inner = PolicyRegistry::global().create(name, settings);
        if (!inner.ok()) return inner.status();
        return std::unique_ptr<SyncPolicy>(
            new DeferredWaitPolicy(std::move(inner).value(), appenders));
      });
  if (!added.ok()) return added;
  return wrapped;
}

Result<DeferredAppend> append_deferred(CommitLog& log, uint32_t table, std::string_view payload) {
  t_wait_owed = false;
  auto position = log.append(table, payload);
  if (!position.ok()) return position.status();
  DeferredAppend out{*position, t_wait_owed};
  t_wait_owed = false;
  return out;
}

}  // namespace commitlog::kv
