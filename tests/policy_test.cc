// The built-in policies, driven by a discrete-event simulation of the sync
// thread with an injected clock: scripted arrivals, a fixed sync duration, no
// sleeping. The simulation follows SyncThread's loop: ask the policy for a
// plan, run it when due; a flush covers what was appended before it started.
#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

#include "policies/builtin.h"

namespace commitlog {
namespace {

using std::chrono::milliseconds;

struct Producer {
  TimePoint arrived;
  ProducerAction action;
  Duration since_flush{};  // how long ago the last completed flush had started
  TimePoint released{TimePoint::max()};
};

struct Simulation {
  SyncPolicy& policy;
  Duration sync_duration;
  TimePoint now{};
  TimePoint last_flush_started{}, last_flush_finished{}, last_seal{};
  bool sync_requested = false;
  bool unflushed = false;
  std::vector<Producer> producers;
  std::vector<TimePoint> flush_starts;
  size_t seals = 0;

  // Runs until `end`, with producers arriving at `arrivals` (sorted).
  void run(const std::vector<TimePoint>& arrivals, TimePoint end) {
    size_t next_arrival = 0;
    while (now < end) {
      while (next_arrival < arrivals.size() && arrivals[next_arrival] <= now) arrive(arrivals[next_arrival++]);
      SyncState s;
      s.now = now;
      s.last_flush_started = last_flush_started;
      s.last_flush_finished = last_flush_finished;
      s.last_seal = last_seal;
      s.sync_requested = sync_requested;
      s.waiting_producers = static_cast<size_t>(std::count_if(producers.begin(), producers.end(), [](const Producer& p) {
        return p.action != ProducerAction::kReturn && p.released == TimePoint::max();
      }));
      s.has_unsealed = s.has_unflushed = unflushed;
      SyncPlan plan = policy.plan(s);
      TimePoint wake = next_arrival < arrivals.size() ? arrivals[next_arrival] : end;
      if (plan.kind != SyncPlan::Kind::kIdle && plan.at <= now) {
        execute(plan);
        continue;
      }
      if (plan.kind != SyncPlan::Kind::kIdle) wake = std::min(wake, plan.at);
      now = wake;
    }
  }

  void arrive(TimePoint at) {
    ProducerView view{at, last_flush_started};
    Producer p{at, policy.after_append(view), at - last_flush_started};
    if (p.action == ProducerAction::kReturn) p.released = at;
    if (p.action == ProducerAction::kRequestSyncAndWait) sync_requested = true;
    unflushed = true;
    producers.push_back(p);
  }

  void execute(const SyncPlan& plan) {
    if (plan.kind == SyncPlan::Kind::kSeal) {
      last_seal = now;
      ++seals;
      return;  // a seal makes data replayable, not durable: still unflushed
    }
    const TimePoint started = now;
    sync_requested = false;
    flush_starts.push_back(started);
    // Everything appended before the flush started is covered by it.
    std::vector<size_t> covered;
    for (size_t i = 0; i < producers.size(); ++i) {
      if (producers[i].arrived <= started && producers[i].released == TimePoint::max()) covered.push_back(i);
    }
    unflushed = false;
    now += sync_duration;
    // Blocked (periodic) and waiting producers alike go on when it completes.
    for (size_t i : covered) producers[i].released = now;
    last_flush_started = started;
    last_flush_finished = last_seal = now;
  }

  Duration max_wait() const {
    Duration worst{};
    for (const auto& p : producers) worst = std::max(worst, p.released - p.arrived);
    return worst;
  }
  size_t count(ProducerAction action) const {
    return static_cast<size_t>(std::count_if(producers.begin(), producers.end(),
                                             [&](const Producer& p) { return p.action == action; }));
  }
};

std::unique_ptr<SyncPolicy> make(const std::string& name, PolicySettings settings = {}) {
  auto policy = PolicyRegistry::global().create(name, settings);
  REQUIRE_MESSAGE(policy.ok(), policy.status().to_string());
  return std::move(policy).value();
}

TimePoint at_ms(double ms) { return TimePoint(std::chrono::duration_cast<Duration>(std::chrono::duration<double, std::milli>(ms))); }

// One arrival every millisecond from 0 until `end_ms`.
std::vector<TimePoint> arrivals_every_ms(int end_ms) {
  std::vector<TimePoint> out;
  for (int t = 0; t < end_ms; ++t) out.push_back(at_ms(t));
  return out;
}

TEST_CASE("batch: one flush per group of waiting producers, back to back") {
  auto policy = make("batch");
  Simulation sim{*policy, milliseconds(2)};
  // One producer at 0 starts a flush; five arrive during it and ride the next one together.
  std::vector<TimePoint> arrivals{at_ms(0), at_ms(0.5), at_ms(0.7), at_ms(1.0), at_ms(1.5), at_ms(1.9)};
  sim.run(arrivals, at_ms(20));
  REQUIRE(sim.flush_starts.size() == 2);
  CHECK(sim.flush_starts[0] == at_ms(0));
  CHECK(sim.flush_starts[1] == at_ms(2));  // back to back: no idle gap
  for (const auto& p : sim.producers) CHECK(p.action == ProducerAction::kRequestSyncAndWait);
  CHECK(sim.max_wait() <= milliseconds(4));
}

TEST_CASE("batch: idle when nobody waits") {
  auto policy = make("batch");
  Simulation sim{*policy, milliseconds(2)};
  sim.run({}, at_ms(1000));
  CHECK(sim.flush_starts.empty());
}

TEST_CASE("group: at most one flush per window, and no producer waits beyond window plus sync") {
  PolicySettings settings;
  settings.group_window = milliseconds(10);
  auto policy = make("group", settings);
  Simulation sim{*policy, milliseconds(3)};
  std::vector<TimePoint> arrivals;
  for (int i = 0; i < 200; ++i) arrivals.push_back(at_ms(i * 0.7));
  sim.run(arrivals, at_ms(400));
  REQUIRE(sim.flush_starts.size() >= 10);
  for (size_t i = 1; i < sim.flush_starts.size(); ++i) {
    CHECK(sim.flush_starts[i] - sim.flush_starts[i - 1] >= milliseconds(10));
  }
  CHECK(sim.max_wait() <= milliseconds(10) + milliseconds(3));
  CHECK(sim.count(ProducerAction::kWaitDurable) == arrivals.size());
  // Far fewer flushes than producers: that is the point of the window.
  CHECK(sim.flush_starts.size() < arrivals.size() / 5);
}

TEST_CASE("group: a lone producer after a quiet spell is flushed at once") {
  PolicySettings settings;
  settings.group_window = milliseconds(10);
  auto policy = make("group", settings);
  Simulation sim{*policy, milliseconds(1)};
  sim.run({at_ms(100)}, at_ms(200));
  REQUIRE(sim.flush_starts.size() == 1);
  CHECK(sim.flush_starts[0] == at_ms(100));
}

TEST_CASE("group needs a window") {
  auto policy = PolicyRegistry::global().create("group", PolicySettings{});
  REQUIRE_FALSE(policy.ok());
  CHECK(policy.status().message().find("commitlog_sync_group_window") != std::string::npos);
}

TEST_CASE("periodic: producers never block while syncs keep up") {
  PolicySettings settings;
  settings.sync_period = milliseconds(100);
  settings.lag_block = milliseconds(150);
  auto policy = make("periodic", settings);
  Simulation sim{*policy, milliseconds(5)};
  const std::vector<TimePoint> arrivals = arrivals_every_ms(1000);
  sim.run(arrivals, at_ms(1000));
  CHECK(sim.count(ProducerAction::kReturn) == arrivals.size());
  CHECK(sim.max_wait() == Duration::zero());
  // Flushes every period; markers about every 100 ms in between are folded
  // into the flushes here because the marker interval equals the period.
  CHECK(sim.flush_starts.size() >= 9);
  CHECK(sim.flush_starts.size() <= 11);
}

TEST_CASE("periodic: producers block while syncs lag behind lag_block") {
  PolicySettings settings;
  settings.sync_period = milliseconds(100);
  settings.lag_block = milliseconds(150);
  auto policy = make("periodic", settings);
  Simulation sim{*policy, milliseconds(400)};  // a disk far slower than the period
  const std::vector<TimePoint> arrivals = arrivals_every_ms(2000);
  sim.run(arrivals, at_ms(2000));
  CHECK(sim.count(ProducerAction::kWaitForSyncToCatchUp) > 0);
  CHECK(sim.count(ProducerAction::kReturn) > 0);
  // Exactly those that arrived more than lag_block after the last completed
  // flush had started were blocked.
  for (const auto& p : sim.producers) {
    CHECK((p.action == ProducerAction::kWaitForSyncToCatchUp) == (p.since_flush > milliseconds(150)));
  }
}

TEST_CASE("periodic: markers between flushes, about every marker interval") {
  PolicySettings settings;
  settings.sync_period = milliseconds(1000);
  settings.marker_interval = milliseconds(100);
  auto policy = make("periodic", settings);
  Simulation sim{*policy, milliseconds(1)};
  const std::vector<TimePoint> arrivals = arrivals_every_ms(2000);
  sim.run(arrivals, at_ms(2000));
  CHECK(sim.flush_starts.size() >= 1);
  CHECK(sim.flush_starts.size() <= 3);
  CHECK(sim.seals >= 15);
  CHECK(sim.seals <= 21);
}

TEST_CASE("the registry lists the built-ins, refuses duplicates and unknown names") {
  auto names = PolicyRegistry::global().names();
  for (const char* n : {"batch", "group", "periodic", "adaptive"})
    CHECK(std::find(names.begin(), names.end(), n) != names.end());
  CHECK_FALSE(PolicyRegistry::global().add("batch", make_batch_policy).ok());
  auto unknown = PolicyRegistry::global().create("nonesuch", {});
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.status().message().find("nonesuch") != std::string::npos);
  CHECK(unknown.status().message().find("periodic") != std::string::npos);
}

}  // namespace
}  // namespace commitlog
