// SPDX-License-Identifier: Apache-2.0
// The adaptive policy's decisions, with an injected clock and scripted
// arrivals: no sleeping, no disk. Two drivers:
//   - scripted states: after_append(), on_flush() and plan() called by hand;
//   - ClosedLoop: a discrete-event model of the sync thread (as in
//     policy_test.cc) whose producers append again a scripted time after each
//     flush releases them -- the case the policy exists for. Unlike the
//     model there, it calls on_flush(), and it counts the arrivals that come
//     during a flush before that call, as the real sync thread does.
// Speed is measured by `commitlog bench`, not here.
#include <doctest/doctest.h>

#include <algorithm>
#include <functional>
#include <numeric>
#include <thread>
#include <vector>

#include "commitlog/commit_log.h"
#include "commitlog/policy_registry.h"
#include "tests/support/temp_dir.h"

namespace commitlog {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;

std::unique_ptr<SyncPolicy> make_adaptive(Duration cap = milliseconds(2)) {
  PolicySettings settings;
  settings.latency_cap = cap;
  auto policy = PolicyRegistry::global().create("adaptive", settings);
  REQUIRE_MESSAGE(policy.ok(), policy.status().to_string());
  return std::move(policy).value();
}

TimePoint at_us(int64_t us) { return TimePoint(microseconds(us)); }

struct ClosedLoop {
  // Every flush takes `sync`. After a flush releases producer p at `t`, it
  // appends again at t + think(p, t), or never if that is Duration::max().
  using Think = std::function<Duration(size_t producer, TimePoint released)>;

  struct Hold {  // a plan that held a sync back
    TimePoint now, at, last_flush_finished, oldest_ready;
  };
  struct Flush {
    TimePoint start;
    size_t group;
    SyncReason reason;
    Duration held;  // start minus when the sync could first have started
  };

  SyncPolicy& policy;
  Duration sync;
  Think think;
  TimePoint now{};
  TimePoint last_flush_started{}, last_flush_finished{};
  bool sync_requested = false;
  struct Waiter {
    size_t producer;
    TimePoint arrived;
  };
  std::vector<Waiter> waiting;
  std::vector<TimePoint> next;  // next arrival per producer
  std::vector<Hold> holds;
  std::vector<Flush> flushes;
  std::vector<Duration> latencies;

  ClosedLoop(SyncPolicy& p, Duration sync_duration, size_t producers, Think t)
      : policy(p), sync(sync_duration), think(std::move(t)), next(producers) {
    for (size_t i = 0; i < producers; ++i) next[i] = TimePoint{} + think(i, TimePoint{});
  }

  TimePoint next_arrival() const { return *std::min_element(next.begin(), next.end()); }

  // Producers that arrive by t append and wait. With stop_at_ask (the sync
  // thread sleeps through a hold) it stops after the first that asks for a
  // sync, which wakes the thread, and returns when that one arrived.
  TimePoint arrive_until(TimePoint t, bool stop_at_ask = false) {
    for (TimePoint a = next_arrival(); a <= t; a = next_arrival()) {
      const size_t p = static_cast<size_t>(std::min_element(next.begin(), next.end()) - next.begin());
      const ProducerAction action = policy.after_append({a, last_flush_started});
      REQUIRE((action == ProducerAction::kRequestSyncAndWait || action == ProducerAction::kWaitDurable));
      waiting.push_back({p, a});
      next[p] = TimePoint::max();
      if (action == ProducerAction::kRequestSyncAndWait) {
        sync_requested = true;
        if (stop_at_ask) return a;
      }
    }
    return t;
  }

  // When the sync of the oldest waiter could first have started.
  TimePoint oldest_ready() const {
    TimePoint oldest = TimePoint::max();
    for (const Waiter& w : waiting) oldest = std::min(oldest, w.arrived);
    return std::max(oldest, last_flush_finished);
  }

  void run(TimePoint end) {
    while (now < end) {
      arrive_until(now);
      SyncState s;
      s.now = now;
      s.last_flush_started = last_flush_started;
      s.last_flush_finished = s.last_seal = last_flush_finished;
      s.last_flush_duration = sync;
      s.sync_requested = sync_requested;
      s.waiting_producers = waiting.size();
      s.has_unsealed = s.has_unflushed = !waiting.empty();
      const SyncPlan plan = policy.plan(s);
      if (plan.kind == SyncPlan::Kind::kFlush && plan.at <= now) {
        flush(plan.reason);
        continue;
      }
      REQUIRE(plan.kind != SyncPlan::Kind::kSeal);
      if (plan.kind == SyncPlan::Kind::kFlush) {
        holds.push_back({now, plan.at, last_flush_finished, oldest_ready()});
        now = arrive_until(std::min(plan.at, end), true);
      } else {
        now = std::min(next_arrival(), end);
      }
    }
  }

  void flush(SyncReason reason) {
    const TimePoint start = now;
    flushes.push_back({start, waiting.size(), reason, waiting.empty() ? Duration{} : start - oldest_ready()});
    const std::vector<Waiter> group = std::exchange(waiting, {});
    sync_requested = false;
    now = start + sync;
    arrive_until(now);  // during the flush: they form the next group
    for (const Waiter& w : group) {
      latencies.push_back(now - w.arrived);
      const Duration t = think(w.producer, now);
      next[w.producer] = t == Duration::max() ? TimePoint::max() : now + t;
    }
    last_flush_started = start;
    last_flush_finished = now;
    policy.on_flush(sync, group.size());
  }

  double mean_group(size_t skip = 0) const {
    double total = 0;
    for (size_t i = skip; i < flushes.size(); ++i) total += static_cast<double>(flushes[i].group);
    return flushes.size() > skip ? total / static_cast<double>(flushes.size() - skip) : 0;
  }
};

// Producer p appends again base + p * stagger after it is released: a
// closed loop of producers that a flush wakes one after another.
ClosedLoop::Think staggered(Duration base, Duration stagger) {
  return [=](size_t p, TimePoint) { return base + static_cast<Duration::rep>(p) * stagger; };
}

TEST_CASE("adaptive: registered by name, producers wait, which wakes an idle sync thread") {
  auto names = PolicyRegistry::global().names();
  CHECK(std::find(names.begin(), names.end(), "adaptive") != names.end());
  auto policy = make_adaptive();
  CHECK(policy->name() == "adaptive");
  CHECK(policy->after_append({at_us(0), at_us(0)}) == ProducerAction::kWaitDurable);
  SyncState waiting;
  waiting.now = at_us(0);
  waiting.waiting_producers = 1;
  waiting.has_unsealed = waiting.has_unflushed = true;
  const SyncPlan plan = policy->plan(waiting);
  CHECK(plan.kind == SyncPlan::Kind::kFlush);
  CHECK(plan.at <= waiting.now);

  PolicySettings negative;
  negative.latency_cap = -milliseconds(1);
  auto refused = PolicyRegistry::global().create("adaptive", negative);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().message().find("commitlog_ext_adaptive_latency_cap") != std::string::npos);
}

TEST_CASE("adaptive: idle while nobody waits") {
  auto policy = make_adaptive();
  SyncState s;
  s.now = at_us(100);
  CHECK(policy->plan(s).kind == SyncPlan::Kind::kIdle);
  s.has_unsealed = s.has_unflushed = true;  // appended, but nobody waits
  CHECK(policy->plan(s).kind == SyncPlan::Kind::kIdle);
}

TEST_CASE("adaptive: one producer at a low rate is synced at once, every time") {
  auto policy = make_adaptive();
  // One producer appending 50us after each 4ms sync: nothing else can come.
  ClosedLoop loop(*policy, milliseconds(4), 1, staggered(microseconds(50), {}));
  loop.run(at_us(200'000));
  REQUIRE(loop.flushes.size() > 40);
  CHECK(loop.holds.empty());
  for (const auto& f : loop.flushes) {
    CHECK(f.held == Duration::zero());
    CHECK(f.reason == SyncReason::kProducerRequest);
  }
  CHECK(*std::max_element(loop.latencies.begin(), loop.latencies.end()) == milliseconds(4));
}

TEST_CASE("adaptive: a high arrival rate with slow syncs holds a sync back, within the cap") {
  // Eight producers appending 20us apart once released; syncs of 4ms. Batch
  // splits them into two cohorts of four that take turns; adaptive waits the
  // ~0.2ms it takes the released cohort to come back, and merges them.
  const Duration cap = milliseconds(2);
  auto policy = make_adaptive(cap);
  ClosedLoop loop(*policy, milliseconds(4), 8, staggered(microseconds(30), microseconds(20)));
  loop.run(at_us(400'000));
  REQUIRE_FALSE(loop.holds.empty());
  for (const auto& h : loop.holds) {
    CHECK(h.at > h.now);
    CHECK(h.at - h.now <= cap);
  }
  CHECK(loop.mean_group(10) > 7.5);
  // The held syncs are counted as the policy's own decisions.
  CHECK(std::count_if(loop.flushes.begin(), loop.flushes.end(),
                      [](const auto& f) { return f.reason == SyncReason::kAdaptive; }) > 50);

  auto batch = PolicyRegistry::global().create("batch", {});
  REQUIRE(batch.ok());
  ClosedLoop batch_loop(**batch, milliseconds(4), 8, staggered(microseconds(30), microseconds(20)));
  batch_loop.run(at_us(400'000));
  CHECK(batch_loop.mean_group(10) < 5.0);  // the cohorts that adaptive merges
}

TEST_CASE("adaptive: a held sync starts as soon as the released producers are back") {
  auto policy = make_adaptive(milliseconds(10));
  ClosedLoop loop(*policy, milliseconds(4), 8, staggered(microseconds(30), microseconds(20)));
  loop.run(at_us(400'000));
  REQUIRE(loop.flushes.size() > 20);
  // The last of the eight is back 30 + 7 * 20 = 170us after its release: the
  // sync starts then, not when the 4ms (= min(cap, sync)) window ends.
  for (size_t i = 10; i < loop.flushes.size(); ++i) CHECK(loop.flushes[i].held <= microseconds(170));
}

TEST_CASE("adaptive: a hold never exceeds the cap, the sync time, or the oldest waiter's remaining budget") {
  for (const Duration cap : {Duration::zero(), Duration(microseconds(300)), Duration(milliseconds(2)),
                             Duration(milliseconds(20))}) {
    for (const Duration sync : {Duration(microseconds(500)), Duration(milliseconds(4))}) {
      for (const size_t producers : {2, 8, 64}) {
        for (const Duration stagger : {Duration(microseconds(1)), Duration(microseconds(40)),
                                       Duration(microseconds(200))}) {
          CAPTURE(cap.count());
          CAPTURE(sync.count());
          CAPTURE(producers);
          CAPTURE(stagger.count());
          auto policy = make_adaptive(cap);
          ClosedLoop loop(*policy, sync, producers, staggered(microseconds(10), stagger));
          loop.run(at_us(200'000));
          const Duration bound = std::min(cap, sync);
          for (const auto& h : loop.holds) {
            CHECK(h.at - h.last_flush_finished <= bound);
            CHECK(h.at - h.oldest_ready <= bound);  // the oldest waiter's budget
          }
          for (const auto& f : loop.flushes) CHECK(f.held <= bound);
          if (cap == Duration::zero()) CHECK(loop.holds.empty());
        }
      }
    }
  }
}

TEST_CASE("adaptive: when the rate drops, syncs start at once again") {
  auto policy = make_adaptive();
  // Eight fast producers until 200ms; then seven stop and one appends only
  // 10ms after each release.
  const TimePoint slow_from = at_us(200'000);
  ClosedLoop loop(*policy, milliseconds(4), 8, [&](size_t p, TimePoint released) -> Duration {
    if (released < slow_from) return microseconds(30) + static_cast<Duration::rep>(p) * microseconds(20);
    return p == 0 ? Duration(milliseconds(10)) : Duration::max();
  });
  loop.run(slow_from);
  REQUIRE_FALSE(loop.holds.empty());  // it held syncs back while the rate was high
  const size_t fast_flushes = loop.flushes.size();
  loop.run(at_us(400'000));
  REQUIRE(loop.flushes.size() > fast_flushes + 10);
  // Only the producers released before 200ms still came back fast.
  for (const auto& h : loop.holds) CHECK(h.last_flush_finished < slow_from);
  for (size_t i = fast_flushes + 1; i < loop.flushes.size(); ++i) {
    CHECK(loop.flushes[i].held == Duration::zero());
    CHECK(loop.flushes[i].group == 1);
  }
}

// Scripted states for four producers that append again 10, 20, 30 and 40us
// after each 4ms flush releases them. Returns the policy after two flushes,
// with s describing the second: F = 8070us, R = 40us.
std::unique_ptr<SyncPolicy> four_producers(SyncState& s, Duration cap) {
  auto policy = make_adaptive(cap);
  s.sync_requested = true;
  s.has_unsealed = s.has_unflushed = true;
  s.waiting_producers = 1;
  for (int i = 0; i < 4; ++i) policy->after_append({at_us(i * 10), at_us(0)});
  s.now = at_us(30);
  REQUIRE(policy->plan(s).at <= s.now);  // no measurements yet: at once
  s.last_flush_started = at_us(30);
  s.last_flush_finished = at_us(4030);
  policy->on_flush(milliseconds(4), 4);
  for (int i = 1; i <= 4; ++i) policy->after_append({at_us(4030 + i * 10), at_us(30)});
  s.now = at_us(4070);
  REQUIRE(policy->plan(s).at <= s.now);  // all four back: nobody pending
  s.last_flush_started = at_us(4070);
  s.last_flush_finished = at_us(8070);
  policy->on_flush(milliseconds(4), 4);  // their return took R = 40us
  return policy;
}

TEST_CASE("adaptive: scripted states -- hold for the released producers, flush when they are back") {
  const Duration cap = milliseconds(2);
  SyncState s;
  auto policy = four_producers(s, cap);
  // The first is back: the other three are expected within 40us of F.
  policy->after_append({at_us(8080), at_us(4070)});
  s.now = at_us(8080);
  SyncPlan p = policy->plan(s);
  CHECK(p.kind == SyncPlan::Kind::kFlush);
  CHECK(p.at > s.now);
  CHECK(p.at <= s.last_flush_finished + cap);
  CHECK(p.reason == SyncReason::kAdaptive);
  // Two more: they wait without waking the sync thread; still holding.
  CHECK(policy->after_append({at_us(8090), at_us(4070)}) == ProducerAction::kWaitDurable);
  CHECK(policy->after_append({at_us(8100), at_us(4070)}) == ProducerAction::kWaitDurable);
  s.now = at_us(8100);
  CHECK(policy->plan(s).at > s.now);
  // The fourth, the last one expected, wakes it: flush now, as the policy's decision.
  CHECK(policy->after_append({at_us(8110), at_us(4070)}) == ProducerAction::kRequestSyncAndWait);
  s.now = at_us(8110);
  p = policy->plan(s);
  CHECK(p.at <= s.now);
  CHECK(p.reason == SyncReason::kAdaptive);
}

TEST_CASE("adaptive: scripted states -- a hold ends when the released are late") {
  SyncState s;
  auto policy = four_producers(s, milliseconds(2));
  // Only one of the four comes back.
  policy->after_append({at_us(8080), at_us(4070)});
  s.now = at_us(8080);
  SyncPlan p = policy->plan(s);
  REQUIRE(p.at > s.now);
  // Late after 3 * R = 120us: well before F + cap (10070us).
  CHECK(p.at <= at_us(8070 + 120 + 1));
  s.now = at_us(8200);
  p = policy->plan(s);
  CHECK(p.at <= s.now);
  CHECK(p.reason == SyncReason::kAdaptive);
}

TEST_CASE("adaptive: scripted states -- a flush the policy did not start also releases a group") {
  SyncState s;
  auto policy = four_producers(s, milliseconds(2));
  // Three of the four are back while the policy holds; then a segment
  // switch flushes them without asking plan().
  for (int i = 1; i <= 3; ++i) policy->after_append({at_us(8070 + i * 10), at_us(4070)});
  s.now = at_us(8100);
  REQUIRE(policy->plan(s).at > s.now);
  s.last_flush_started = at_us(8100);
  s.last_flush_finished = at_us(12100);
  policy->on_flush(milliseconds(4), 3);
  // The switch flush released three; the first back waits for the others.
  policy->after_append({at_us(12110), at_us(8100)});
  s.now = at_us(12110);
  const SyncPlan p = policy->plan(s);
  CHECK(p.at > s.now);
  CHECK(p.reason == SyncReason::kAdaptive);
}

// Scripted states for two producers that append again 1 and 2ms after each
// 4ms flush releases them (R -> ~2.1ms), until `waiting` more arrive during
// the last flush. Returns the state just after that flush (now = F).
SyncState two_slow_producers(SyncPolicy& policy, size_t waiting) {
  SyncState s;
  s.sync_requested = true;
  s.has_unsealed = s.has_unflushed = true;
  s.waiting_producers = 1;
  auto flush = [&](TimePoint start) {
    s.last_flush_started = start;
    s.last_flush_finished = start + milliseconds(4);
    policy.on_flush(milliseconds(4), 2);
  };
  policy.after_append({at_us(0), at_us(0)});
  policy.after_append({at_us(10), at_us(0)});
  s.now = at_us(10);
  REQUIRE(policy.plan(s).at <= s.now);
  flush(s.now);
  for (int round = 0; round < 12; ++round) {
    const TimePoint f = s.last_flush_finished;
    policy.after_append({f + milliseconds(1), at_us(0)});
    policy.after_append({f + milliseconds(2), at_us(0)});
    s.now = f + milliseconds(2);
    REQUIRE(policy.plan(s).at <= s.now);  // both back: nobody pending
    if (round == 11) {
      for (size_t i = 0; i < waiting; ++i) {
        policy.after_append({s.now + microseconds(100 + 10 * static_cast<int64_t>(i)), at_us(0)});
      }
    }
    flush(s.now);
  }
  s.now = s.last_flush_finished;
  return s;
}

TEST_CASE("adaptive: scripted states -- no hold when the wait costs more than the group gains") {
  for (const size_t waiting : {size_t{10}, size_t{1}}) {
    CAPTURE(waiting);
    auto policy = make_adaptive(milliseconds(2));
    const SyncState s = two_slow_producers(*policy, waiting);
    // The two producers the last flush released are expected back about
    // R = 2.1ms after it: waiting for them makes the sync cycle ~1.5 times
    // longer. That pays for one waiter (the group triples), not for ten
    // (x1.2): pending * S = 8ms against g * d = 2.1ms or 21ms.
    const SyncPlan p = policy->plan(s);
    if (waiting == 10) {
      CHECK(p.at <= s.now);
      CHECK(p.reason == SyncReason::kProducerRequest);
    } else {
      CHECK(p.at > s.now);
      CHECK(p.at <= s.now + milliseconds(2));
    }
  }
}

TEST_CASE(
    "adaptive: scripted states -- a hold for a second cohort ends at S, within a longer cap") {
  // Two or three waiting and the two released pending, S = 4ms, R ~ 2.1ms:
  // waiting pays, and a cap of 5ms still ends the hold at S.
  for (const size_t waiting : {size_t{2}, size_t{3}}) {
    CAPTURE(waiting);
    auto policy = make_adaptive(milliseconds(5));
    const SyncState s = two_slow_producers(*policy, waiting);
    const SyncPlan p = policy->plan(s);
    CHECK(p.reason == SyncReason::kAdaptive);
    CHECK(p.at == s.last_flush_finished + milliseconds(4));
  }
}

// Scripted states for a busy spell: groups of 50 producers that append 2us
// apart, each 100us after the 4ms flush before released them: 50 arrivals
// per 4.1ms (12.2 per ms), R ~ 98us. Returns the state after six flushes.
SyncState busy_spell(SyncPolicy& policy) {
  SyncState s;
  s.sync_requested = true;
  s.has_unsealed = s.has_unflushed = true;
  s.waiting_producers = 1;
  int64_t t = 0;
  for (int round = 0; round < 6; ++round) {
    for (int i = 0; i < 50; ++i) policy.after_append({at_us(t + i * 2), at_us(0)});
    s.now = at_us(t + 100);
    REQUIRE(policy.plan(s).at <= s.now);  // all of the released are back
    s.last_flush_started = s.now;
    s.last_flush_finished = s.now + milliseconds(4);
    policy.on_flush(milliseconds(4), 50);
    t += 4100;
  }
  return s;
}

// After busy_spell(), 20 of the 50 released by the last flush are back
// (g = 20, pending 30), and waiting_producers counts them plus `queued`
// released producers whose threads or fibers have not run yet.
SyncState fifty_producers_then(SyncPolicy& policy, size_t queued) {
  SyncState s = busy_spell(policy);
  for (int i = 1; i <= 20; ++i)
    policy.after_append({s.last_flush_finished + microseconds(i), at_us(0)});
  s.now = s.last_flush_finished + microseconds(20);
  s.waiting_producers = 20 + queued;
  return s;
}

TEST_CASE(
    "adaptive: scripted states -- producers queued for the CPU: each group is held to the cap") {
  // With a 5ms cap, the arrival rate brings about 61 producers per cap. 100
  // released producers not yet run would take longer than that to come back:
  // bound by the CPU. The group is held until F + cap, beyond S (4ms) and
  // beyond the released being late (3R ~ 0.3ms), and no arrival ends it.
  auto policy = make_adaptive(milliseconds(5));
  SyncState s = fifty_producers_then(*policy, 100);
  const SyncPlan p = policy->plan(s);
  CHECK(p.kind == SyncPlan::Kind::kFlush);
  CHECK(p.reason == SyncReason::kAdaptive);
  CHECK(p.at == s.last_flush_finished + milliseconds(5));
  for (int i = 0; i < 200; ++i) {
    CHECK(policy->after_append({s.now + microseconds(i + 1), s.last_flush_started}) ==
          ProducerAction::kWaitDurable);
  }
  s.now = p.at;
  s.waiting_producers = 320;
  const SyncPlan at_cap = policy->plan(s);
  CHECK(at_cap.at <= s.now);
  CHECK(at_cap.reason == SyncReason::kAdaptive);
}

TEST_CASE(
    "adaptive: scripted states -- few queued for the CPU, or a cap of 0: the disk-bound rule") {
  SUBCASE("50 queued, fewer than a cap brings, though 70 wait in all") {
    auto policy = make_adaptive(milliseconds(5));
    const SyncState s = fifty_producers_then(*policy, 50);
    // The disk-bound rule: hold for the 30 released, until they are late.
    const SyncPlan p = policy->plan(s);
    CHECK(p.at > s.now);
    CHECK(p.at < s.last_flush_finished + milliseconds(1));
    int asked = 0;
    for (int i = 0; i < 30; ++i) {
      asked += policy->after_append({s.now + microseconds(i + 1), s.last_flush_started}) ==
               ProducerAction::kRequestSyncAndWait;
    }
    CHECK(asked > 0);
  }
  SUBCASE("a cap of 0 never holds") {
    auto policy = make_adaptive(Duration::zero());
    const SyncState s = fifty_producers_then(*policy, 1000);
    CHECK(policy->plan(s).at <= s.now);
  }
}

TEST_CASE("adaptive: scripted states -- a lone producer after a quiet spell is synced at once") {
  auto policy = make_adaptive();
  SyncState s = busy_spell(*policy);
  // Then one producer, 50ms after the last flush: flush at once.
  policy->after_append({s.last_flush_finished + milliseconds(50), at_us(0)});
  s.now = s.last_flush_finished + milliseconds(50);
  const SyncPlan p = policy->plan(s);
  CHECK(p.at <= s.now);
  CHECK(p.reason == SyncReason::kProducerRequest);
}

TEST_CASE("adaptive: scripted states -- a lone producer back before on_flush() is still synced at once") {
  auto policy = make_adaptive();
  SyncState s;
  s.sync_requested = true;
  s.has_unsealed = s.has_unflushed = true;
  s.waiting_producers = 1;
  // One producer, back 10us after each 4ms flush releases it: gap = 10us.
  int64_t t = 0;
  for (int round = 0; round < 6; ++round) {
    const bool races = round == 5;  // comes back before the sync thread calls on_flush()
    policy->after_append({at_us(t), at_us(0)});
    s.now = at_us(t);
    CHECK(policy->plan(s).at <= s.now);
    s.last_flush_started = at_us(t);
    s.last_flush_finished = at_us(t + 4000);
    t += 4010;
    if (races) policy->after_append({at_us(t), at_us(0)});
    policy->on_flush(milliseconds(4), 1);
  }
  s.now = at_us(t);
  const SyncPlan p = policy->plan(s);
  CHECK(p.at <= s.now);
  CHECK(p.reason == SyncReason::kProducerRequest);
}

TEST_CASE("adaptive: a real log counts every flush by reason and by group size") {
  testing::TempDir dir;
  Options options;
  options.directory = dir.path();
  options.sync_policy = "adaptive";
  options.segment_size = 1 << 20;
  auto log = CommitLog::open(options);
  REQUIRE_MESSAGE(log.ok(), log.status().to_string());
  constexpr int kThreads = 4, kPerThread = 50;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kPerThread; ++i) REQUIRE((*log)->append(1, "mutation").ok());
    });
  }
  for (auto& t : threads) t.join();
  REQUIRE((*log)->close().ok());
  const MetricsSnapshot m = (*log)->metrics();  // the sync thread has stopped
  const uint64_t flushes = std::accumulate(m.syncs_by_reason.begin(), m.syncs_by_reason.end(), uint64_t{0});
  CHECK(flushes > 0);
  CHECK(m.syncs_by_reason[static_cast<size_t>(SyncReason::kProducerRequest)] > 0);
  CHECK(m.mutations_per_sync.count() == flushes);
  CHECK(m.mutations_completed == kThreads * kPerThread);
}

}  // namespace
}  // namespace commitlog
