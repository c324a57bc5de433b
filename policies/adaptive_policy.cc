// adaptive: batch's latency when producers are few, a group's throughput when
// they are many, with no fixed window (issue 9; the rule is explained, with
// its constants, in docs/adaptive.md).
//
// Producers ask for a sync and wait, as with batch: a sync starts as soon as
// someone waits and none is running, and whatever arrives during a sync forms
// the next group. The policy adds one thing: a short delay right after a
// flush, while the producers that flush released are expected to append
// again. Without it, producers that append again as soon as they are released
// split into two cohorts that take turns -- one waits for the running sync
// while the other is in it -- and each sync carries only half of them.
//
// The rule, evaluated each time the sync thread wakes with a producer waiting
// (it wakes on every arrival while it holds a sync back):
//   S    sync duration (EWMA),  gap  time between arrivals (EWMA, below),
//   g    producers arrived since the last flush started (the pending group),
//   G    the group the last flush released,  r  arrivals since it finished (at F),
//   W    min(latency_cap, S): the most the policy holds a sync back after F;
//   pending = G - r while now < F + W, else 0 (released, not back yet);
//   flush now     if pending == 0, or S <= kMinGain * g * gap: waiting d adds
//                 d/gap producers, and (g + d/gap) / (S + d) > g / S only if
//                 S / gap > g;
//   else flush at min(F + W, max(F, last arrival) + kGapFactor * gap).
// A group never waits longer than W after a sync could have started for it
// (F, or its first arrival if later), so the cap bounds the delay and is never
// a floor: a flush starts early as soon as the released producers are back.
//
// gap is sampled at every flush the policy starts: the span from the last
// flush's end to the last arrival, divided by the arrivals since then; or,
// when all of the group arrived during that flush, the span from its start.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>

#include "policies/registry.h"

namespace commitlog {
namespace {

using Nanos = std::chrono::duration<double, std::nano>;

// Weight of a new sample in the moving averages: about the last 4 flushes count.
constexpr double kEwmaWeight = 0.25;
// Hold a sync back only if the linear model promises 25% more than break-even,
// so measurement noise around the break-even point does not add delay.
constexpr double kMinGain = 1.25;
// Arrivals have paused when none came for this many average gaps (for a
// Poisson stream, the chance of such a pause is e^-4, under 2%).
constexpr double kGapFactor = 4.0;

// An exponentially weighted moving average, unknown until its first sample.
class Average {
 public:
  void add(double sample) { value_ = known() ? value_ + kEwmaWeight * (sample - value_) : sample; }
  bool known() const { return value_ >= 0; }
  double value() const { return value_; }

 private:
  double value_ = -1;
};

class AdaptivePolicy final : public SyncPolicy {
 public:
  explicit AdaptivePolicy(Duration latency_cap) : cap_(latency_cap) {}

  std::string_view name() const override { return "adaptive"; }

  // Counts the arrival for plan(): two relaxed stores to one cache line.
  ProducerAction after_append(const ProducerView& v) const override {
    arrivals_.count.fetch_add(1, std::memory_order_relaxed);
    arrivals_.last_ns.store(v.now.time_since_epoch().count(), std::memory_order_relaxed);
    return ProducerAction::kRequestSyncAndWait;
  }

  SyncPlan plan(const SyncState& s) override {
    if (!s.sync_requested && !(s.waiting_producers > 0 && s.has_unflushed)) {
      holding_ = false;
      return {};
    }
    const uint64_t count = arrivals_.count.load(std::memory_order_relaxed);
    const TimePoint last{Duration(arrivals_.last_ns.load(std::memory_order_relaxed))};
    const SyncReason reason = holding_ ? SyncReason::kAdaptive : SyncReason::kProducerRequest;
    const uint64_t g = count - group_base_;
    const uint64_t r = count - release_base_;
    if (!s.has_unflushed || g == 0 || !sync_ns_.known() || !gap_ns_.known()) {
      return flush_now(s, count, last, reason);
    }
    const double sync = sync_ns_.value();
    const double gap = gap_ns_.value();
    const TimePoint window_end = s.last_flush_finished + std::min(cap_, std::chrono::ceil<Duration>(Nanos(sync)));
    const uint64_t pending = s.now < window_end && released_ > r ? released_ - r : 0;
    if (pending == 0 || sync <= kMinGain * static_cast<double>(g) * gap) {
      return flush_now(s, count, last, reason);
    }
    const TimePoint pause = std::max(s.last_flush_finished, last) + std::chrono::ceil<Duration>(Nanos(kGapFactor * gap));
    const TimePoint at = std::min(window_end, pause);
    if (at <= s.now) return flush_now(s, count, last, reason);
    holding_ = true;
    return {SyncPlan::Kind::kFlush, at, SyncReason::kAdaptive};
  }

  void on_flush(Duration duration, size_t /*mutations*/) override {
    sync_ns_.add(Nanos(duration).count());
    const uint64_t count = arrivals_.count.load(std::memory_order_relaxed);
    if (started_group_) {
      released_ = started_group_size_;
    } else {  // a flush plan() did not start: segment switch, explicit, shutdown
      released_ = count - group_base_;
      group_base_ = count;
    }
    started_group_ = holding_ = false;
    release_base_ = count;
  }

 private:
  // Starts a flush of the pending group: samples gap and opens the next group.
  SyncPlan flush_now(const SyncState& s, uint64_t count, TimePoint last, SyncReason reason) {
    const uint64_t g = count - group_base_;
    const uint64_t r = count - release_base_;
    if (r > 0 && last > s.last_flush_finished) {
      gap_ns_.add(Nanos(last - s.last_flush_finished).count() / static_cast<double>(r));
    } else if (g > 0 && last > s.last_flush_started) {
      gap_ns_.add(Nanos(last - s.last_flush_started).count() / static_cast<double>(g));
    }
    started_group_ = true;
    started_group_size_ = g;
    group_base_ = count;
    holding_ = false;
    return {SyncPlan::Kind::kFlush, s.now, reason};
  }

  // Written by producers, read by the sync thread; on a line of their own.
  struct alignas(64) Arrivals {
    std::atomic<uint64_t> count{0};
    std::atomic<int64_t> last_ns{std::numeric_limits<int64_t>::min()};
  };
  mutable Arrivals arrivals_;

  const Duration cap_;
  // Sync-thread state.
  Average sync_ns_;                  // S
  Average gap_ns_;                   // gap
  uint64_t group_base_ = 0;          // arrivals when the pending group opened
  uint64_t release_base_ = 0;        // arrivals when the last flush finished
  uint64_t released_ = 0;            // G
  uint64_t started_group_size_ = 0;  // g of the flush plan() started last
  bool started_group_ = false;       // the running or next flush is one plan() started
  bool holding_ = false;             // plan() is holding a sync back
};

}  // namespace

Result<std::unique_ptr<SyncPolicy>> make_adaptive_policy(const PolicySettings& settings) {
  if (settings.latency_cap < Duration::zero()) {
    return Status::invalid_argument("commitlog_ext_adaptive_latency_cap must not be negative");
  }
  return std::unique_ptr<SyncPolicy>(new AdaptivePolicy(settings.latency_cap));
}

}  // namespace commitlog
