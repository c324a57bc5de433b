// SPDX-License-Identifier: Apache-2.0
// adaptive: batch's latency when producers are few, a group's throughput when
// they are many, with no fixed window (the rule is explained, with its
// constants, in docs/design.md, "The adaptive policy").
//
// Producers ask for a sync and wait, as with batch: a sync starts as soon as
// someone waits and none is running, and whatever arrives during a sync forms
// the next group. The policy adds one thing: a short delay right after a
// flush, while the producers that flush released are expected to append
// again -- the group hold of policies/group_hold.h, evaluated each time the
// sync thread wakes with a producer waiting, with latency_cap as its cap and
// these measures:
//   S        sync duration (moving average);
//   R        how long after a flush the last producer it released appends
//            again (moving average, sampled when the next flush ends, so it
//            counts the stragglers that arrived during that flush);
//   F        when the last flush finished;  G  the producers it released;
//   r        arrivals since F;  g  arrivals since the last flush started: the
//            pending group;  pending = G - r: released, not back yet.
// While it holds a sync back, the arrival that turns the rule to "flush now"
// (or the last of the released) asks for a sync and so wakes the thread.
// Bound by the CPU instead, the test does not apply. A producer that a flush
// released counts as waiting until its thread or fiber runs, so the waiting
// producers beyond the pending group are queued for the CPU. When they are
// so many that at the arrival rate (between flush starts) they would take
// kQueuedCaps caps to come back, each group is held until F + latency_cap,
// and no arrival ends the hold: the queued keep the CPUs busy meanwhile, so
// the hold lengthens no cycle, and fewer flushes leave more CPU to them.
// A group is never held longer than min(latency_cap, S) after a sync could
// have started for it (F, or its first arrival if later), or latency_cap when
// bound by the CPU, so the cap bounds the delay and is never a floor. A lone
// producer is its own released group: it is never held.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>

#include "policies/builtin.h"
#include "policies/group_hold.h"

namespace commitlog {
namespace {

using Nanos = std::chrono::duration<double, std::nano>;

// Bound by the CPU when the producers queued for it would take this many
// caps to come back at the arrival rate. One cap: then the queued cannot all
// come back within a hold anyway. Thread producers bound by the disk queue
// far less than a cap's worth; tens of thousands of fibers on a few threads
// queue a cap's worth or more.
constexpr double kQueuedCaps = 1.0;

class AdaptivePolicy final : public SyncPolicy {
 public:
  explicit AdaptivePolicy(Duration latency_cap) : cap_(latency_cap) {}

  std::string_view name() const override { return "adaptive"; }

  // Records the arrival for plan(): one add, one store and one load, on one
  // cache line. A waiter wakes an idle sync thread, which then plans, and a
  // busy one plans once its flush ends, so asking for a sync is needed only
  // to end a hold: while a sync is held, the arrival that can end the hold
  // asks; the others just wait. (Asking costs two more stores to lines that
  // every producer and the sync thread share.)
  ProducerAction after_append(const ProducerView& v) const override {
    const uint64_t count = arrivals_.count.fetch_add(1) + 1;
    arrivals_.last_ns.store(v.now.time_since_epoch().count(), std::memory_order_relaxed);
    const uint64_t wake_at = arrivals_.wake_at.load();
    return wake_at != 0 && count >= wake_at ? ProducerAction::kRequestSyncAndWait
                                            : ProducerAction::kWaitDurable;
  }

  SyncPlan plan(const SyncState& s) override {
    if (!s.sync_requested && !(s.waiting_producers > 0 && s.has_unflushed)) {
      holding_ = false;
      arrivals_.wake_at.store(0);
      return {};
    }
    const uint64_t count = arrivals_.count.load(std::memory_order_relaxed);
    const TimePoint last = time(arrivals_.last_ns.load(std::memory_order_relaxed));
    const uint64_t g = count - group_base_;
    uint64_t r = count - release_base_;
    // An arrival between F and on_flush()'s snapshot was counted before it.
    if (r == 0 && g > 0 && last > s.last_flush_finished) r = 1;
    const SyncReason reason = holding_ ? SyncReason::kAdaptive : SyncReason::kProducerRequest;
    if (s.has_unflushed && g > 0 && queued_for_cpu(s, g)) {
      return hold_until(s, count, reason, s.last_flush_finished + cap_, 0);
    }
    const uint64_t pending = released_ > r ? released_ - r : 0;
    if (!s.has_unflushed || !sync_ns_.known() || !return_ns_.known()) {
      return flush_now(s, count, reason);
    }
    const GroupHoldState hold{s.now, s.last_flush_finished, pending, g, sync_ns_.value(),
                              return_ns_.value(), cap_};
    const std::optional<TimePoint> at = hold_group_until(hold);
    if (!at) return flush_now(s, count, reason);
    // The arrival that turns the rule to "flush now" wakes the thread.
    return hold_until(s, count, reason, *at, count + std::max<uint64_t>(returns_to_end_hold(hold), 1));
  }

  PolicyPromise promise() const override { return {.max_added_delay = cap_}; }

  void on_flush(Duration duration, size_t /*mutations*/) override {
    sync_ns_.add(Nanos(duration).count());
    const uint64_t count = arrivals_.count.load(std::memory_order_relaxed);
    if (started_group_) {
      // The last producer of the previous release came back by `last`: the
      // sync thread calls on_flush() before it wakes this flush's waiters.
      const TimePoint last = time(arrivals_.last_ns.load(std::memory_order_relaxed));
      if (released_ > 0 && last > release_) return_ns_.add(Nanos(last - release_).count());
      released_ = started_group_size_;
    } else {  // a flush plan() did not start: segment switch, explicit, shutdown
      released_ = count - group_base_;
      group_base_ = count;
    }
    started_group_ = holding_ = false;
    release_base_ = count;
  }

 private:
  static TimePoint time(int64_t ns) { return TimePoint(Duration(ns)); }

  // `g` of the waiting producers are the pending group; the rest were
  // released and have not run yet.
  bool queued_for_cpu(const SyncState& s, uint64_t g) const {
    return arrivals_per_ns_.known() && s.waiting_producers > g &&
           static_cast<double>(s.waiting_producers - g) >=
               kQueuedCaps * arrivals_per_ns_.value() * Nanos(cap_).count();
  }

  // Holds the pending group until `at`; the arrival numbered `wake_at` (0:
  // none) wakes the sync thread to plan again before then.
  SyncPlan hold_until(const SyncState& s, uint64_t count, SyncReason reason, TimePoint at,
                      uint64_t wake_at) {
    if (at <= s.now) return flush_now(s, count, reason);
    holding_ = true;
    arrivals_.wake_at.store(wake_at);
    // An arrival counted after `count` and before that store did not see
    // wake_at and did not ask; if it was the one, the rule says flush now.
    // (Its add comes before its load of wake_at, this store before this
    // load: one of the two sees the other.)
    const uint64_t now_count = arrivals_.count.load();
    if (wake_at != 0 && now_count >= wake_at) return flush_now(s, now_count, reason);
    return {SyncPlan::Kind::kFlush, at, SyncReason::kAdaptive};
  }

  // Starts a flush of the pending group and opens the next one. The arrival
  // rate is sampled from one flush start to the next.
  SyncPlan flush_now(const SyncState& s, uint64_t count, SyncReason reason) {
    if (rate_since_ != TimePoint{} && s.now > rate_since_) {
      arrivals_per_ns_.add(static_cast<double>(count - rate_base_) /
                           Nanos(s.now - rate_since_).count());
    }
    rate_since_ = s.now;
    rate_base_ = count;
    started_group_ = true;
    started_group_size_ = count - group_base_;
    release_ = s.last_flush_finished;
    group_base_ = count;
    holding_ = false;
    arrivals_.wake_at.store(0);
    return {SyncPlan::Kind::kFlush, s.now, reason};
  }

  // Written by producers, read by the sync thread; on a line of their own.
  struct alignas(64) Arrivals {
    std::atomic<uint64_t> count{0};
    std::atomic<int64_t> last_ns{std::numeric_limits<int64_t>::min()};
    std::atomic<uint64_t> wake_at{0};  // set by plan() while it holds; 0: no arrival asks
  };
  mutable Arrivals arrivals_;

  const Duration cap_;
  // Sync-thread state.
  MovingAverage sync_ns_;            // S
  MovingAverage return_ns_;          // R
  MovingAverage arrivals_per_ns_;    // arrival rate between flush starts
  TimePoint rate_since_{};           // the last flush start plan() made
  uint64_t rate_base_ = 0;           // arrivals then
  uint64_t group_base_ = 0;          // arrivals when the pending group opened
  uint64_t release_base_ = 0;        // arrivals when the last flush finished
  uint64_t released_ = 0;            // G
  uint64_t started_group_size_ = 0;  // g of the flush plan() started last
  TimePoint release_{};              // F when plan() started the running flush
  bool started_group_ = false;       // the running flush is one plan() started
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
