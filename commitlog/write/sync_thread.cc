// SPDX-License-Identifier: Apache-2.0
#include "commitlog/write/sync_thread.h"

#include <algorithm>

#include "commitlog/util/test_points.h"
#include "commitlog/util/thread_name.h"

namespace commitlog {
namespace {

constexpr uint32_t word(auto state) { return static_cast<uint32_t>(state); }

}  // namespace

SyncThread::SyncThread(Clock& clock, SegmentChain& chain, DurableWaiters& waiters,
                       SyncPolicy& policy, CommitFailurePolicy failure_policy,
                       bool overlap_commits, CommitObserver* observer)
    : clock_(clock),
      chain_(chain),
      waiters_(waiters),
      policy_(policy),
      state_(clock),
      last_seal_(clock.now()),
      pipeline_(clock, chain, waiters, policy, counters_, failure_policy, overlap_commits, observer,
                [this] { wake(kCommitDone); }),
      clock_moves_(clock, [this] { wake(kTimeMoved); }) {
  waiters_.advance(0, last_seal_);
  thread_ = std::thread([this] { run(); });
}

SyncThread::~SyncThread() { stop(); }

// Wakers set their request first and read the state second; the thread
// stores the state first and reads the requests second (all seq_cst): so
// either the waker sees the thread asleep and wakes it, or the thread sees
// the request and does not sleep. A sleep is a futex wait on the state word,
// ended by whoever moves the word on: no mutex on either side.
void SyncThread::wake(uint32_t requests) {
  requests_.fetch_or(requests);
  while (true) {
    const uint32_t state = state_.load();
    if ((ended_by(static_cast<State>(state)) & requests) == 0) return;
    // Failing, the thread woke by itself meanwhile, or went to another sleep: look again.
    if (state_.compare_exchange(state, word(State::kRunning))) {
      state_.wake_one();
      return;
    }
  }
}

void SyncThread::request_sync() { wake(kSyncAsked | kPoked); }

// A sleep until a planned time ends by itself at that time and plans again,
// with this waiter counted: ending it now would only make the same plan
// (under a hold or a group window, once per arriving producer). Nor does a
// waiter that came while the thread planned keep it from that sleep: with
// producers arriving all the time, one always has, and the thread would
// plan again and again through every hold, on a CPU the producers need. A
// policy that wants an earlier end asks with kRequestSyncAndWait.
void SyncThread::notify_waiter() { wake(kWaiter); }

void SyncThread::notify_switch() { wake(kSwitch); }

void SyncThread::request_explicit_flush() { wake(kExplicit); }

void SyncThread::stop() {
  if ((requests_.load() & kStop) != 0) return;
  wake(kStop);
  thread_.join();
}

void SyncThread::run() {
  name_this_thread("cl-sync");
  MutexLock round(round_mu_);
  while (true) {
    // Taken before anything they ask for is looked at: one that comes later
    // keeps the thread from sleeping.
    requests_.fetch_and(~uint32_t{kPoked | kWaiter | kCommitDone | kTimeMoved});
    pipeline_.collect(/*wait=*/false);
    const TimePoint now = clock_.now();
    const bool stopping = (requests_.load() & kStop) != 0;
    const SyncPlan plan = next_plan(now, stopping);
    pending_.reset();
    const bool due =
        plan.kind != SyncPlan::Kind::kIdle && plan.at <= now && !pipeline_.stopped();
    TimePoint at = plan.at;
    if (due && plan.kind == SyncPlan::Kind::kFlush && pipeline_.committing() && !stopping) {
      pipeline_.note_due_while_committing();
      at = std::max(at, pipeline_.stage_point());
    }
    if (due && at <= now) {
      execute(plan);
    } else if (due) {
      // Kept rather than planned again: a policy may count a plan it made as
      // a flush started (adaptive).
      pending_ = plan;
    }
    if (stopping) {
      pipeline_.collect(/*wait=*/true);
      return;
    }
    if (due && at <= now) continue;
    const bool idle = plan.kind == SyncPlan::Kind::kIdle || pipeline_.stopped();
    const State state = pending_ ? State::kAwaitingCommit : idle ? State::kIdle : State::kUntilPlan;
    round.unlock();
    sleep(state, state == State::kIdle ? TimePoint::max() : at);
    round.lock();
  }
}

// The leader skips what only the thread needs between rounds: collecting an
// overlapped commit (it leads only when none is in flight) and sleeping. It
// leads only while the thread sleeps with nothing planned: a thread asleep
// until a planned time is a policy holding a group open (adaptive), whose
// producers then flush themselves one group early, at more CPU per append.
// A plan that is not a flush due now is handed to the thread as its pending
// plan, and the caller then wakes it: it sleeps on that plan rather than ask
// the policy again (a policy may count the plans it makes, as adaptive does,
// and a hold planned twice would be counted twice).
// The state is read before the mutex is tried, so that producers finding the
// thread busy (all of them, under load) touch no shared line but the state's;
// and again once it is held. An idle thread has no pending plan.
bool SyncThread::lead_flush(bool asked) {
  if (state_.load() != word(State::kIdle)) return false;
  if (!round_mu_.try_lock()) return false;
  const bool led = lead_holding_round(asked);
  round_mu_.unlock();
  return led;
}

bool SyncThread::lead_holding_round(bool asked) {
  if (state_.load() != word(State::kIdle) || pipeline_.committing() || pipeline_.stopped()) return false;
  const uint32_t requests = asked ? requests_.fetch_or(kSyncAsked) : requests_.load();
  if ((requests & kStop) != 0) return false;
  const TimePoint now = clock_.now();
  const SyncPlan plan = next_plan(now, /*stopping=*/false);
  if (plan.kind != SyncPlan::Kind::kFlush || plan.at > now) {
    if (plan.kind != SyncPlan::Kind::kIdle) pending_ = plan;
    return false;
  }
  counters_.led_flushes.fetch_add(1, std::memory_order_relaxed);
  execute(plan);
  return true;
}

SyncPlan SyncThread::next_plan(TimePoint now, bool stopping) {
  using Kind = SyncPlan::Kind;
  if (stopping) return {Kind::kFlush, now, SyncReason::kShutdown};
  if (pending_) return *pending_;
  if (take(kSwitch)) return {Kind::kFlush, now, SyncReason::kSegmentSwitch};
  if (take(kExplicit)) return {Kind::kFlush, now, SyncReason::kExplicit};
  if (pipeline_.stopped()) return {};
  SyncPlan plan = policy_.plan(snapshot(now));
  // A kind outside the enum (a policy's bug) is taken at its safest.
  if (plan.kind != Kind::kIdle && plan.kind != Kind::kSeal && plan.kind != Kind::kFlush) plan = {Kind::kFlush, now, plan.reason};
  return plan;
}

SyncState SyncThread::snapshot(TimePoint now) const {
  const FlushPipeline::Timing& flushed = pipeline_.timing();
  SyncState s;
  s.now = now;
  // A flush still committing has started: the next one is planned from it.
  s.last_flush_started = pipeline_.last_started();
  s.last_flush_finished = flushed.finished;
  s.last_seal = std::max(last_seal_, flushed.finished);
  s.last_flush_duration = flushed.duration;
  s.sync_requested = (requests_.load() & kSyncAsked) != 0;
  s.waiting_producers = waiters_.waiting();
  s.has_unflushed = pipeline_.retrying();
  for (MappedSegment* segment : chain_.unfinished()) {
    s.has_unsealed = s.has_unsealed || segment->has_unsealed();
    s.has_unflushed = s.has_unflushed || segment->has_unflushed();
  }
  return s;
}

void SyncThread::execute(const SyncPlan& plan) {
  const std::vector<MappedSegment*> segments = chain_.unfinished();
  bool flush = plan.kind == SyncPlan::Kind::kFlush;
  for (MappedSegment* segment : segments) flush = flush || segment->closed();
  // Cleared before sealing: a producer that asks from here on rides the next flush.
  if (flush) requests_.fetch_and(~uint32_t{kSyncAsked});
  if (flush) {
    pipeline_.flush(plan.reason, clock_.now(), segments,
                    [this] { return (requests_.load() & kSyncAsked) != 0; });
  } else {
    for (MappedSegment* segment : segments) seal_segment(*segment, counters_);
    last_seal_ = clock_.now();
    counters_.seals.fetch_add(1, std::memory_order_relaxed);
  }
  // After the waiters are woken: their latency does not include it.
  chain_.active()->prepare_ahead();
  if (!pipeline_.committing()) chain_.reclaim();
}

// A request that ends this sleep and came before it keeps the thread awake.
void SyncThread::sleep(State state, TimePoint until) {
  state_.store(word(state));
  if ((requests_.load() & ended_by(state)) == 0) {
    reach_test_point("sync loop: asleep");
    const bool timed = until != TimePoint::max();
    const TimePoint wake_at = timed ? clock_.wake_by_itself_at(until) : TimePoint::max();
    while (state_.load() == word(state) && (!timed || clock_.now() < until)) {
      state_.wait(word(state), wake_at);
    }
    reach_test_point("sync loop: awake");
  }
  state_.store(word(State::kRunning));
}

}  // namespace commitlog
