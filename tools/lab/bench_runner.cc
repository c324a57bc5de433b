// SPDX-License-Identifier: Apache-2.0
#include "tools/lab/bench_runner.h"

#include <algorithm>
#include <atomic>
#include <boost/fiber/all.hpp>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace commitlog::tools {
namespace {

// kPause parks every producer between two appends, so that the engine's
// counters are read while no append is in flight: an op counts when it
// starts in kMeasure, and every op counted has ended (its threads joined)
// before the counters are read again. So each sync an append makes is
// counted exactly when its op is.
enum Phase : int { kWarmup, kPause, kMeasure, kStop };

uint64_t mix(uint64_t x) {  // splitmix64
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// What the producers of one thread (the thread itself, or its fibers) record.
struct alignas(64) ThreadTally {
  LatencyHistogram latency;
  uint64_t ops = 0;
};

struct Shared {
  BenchEngine& engine;
  const std::vector<std::vector<std::byte>>& payloads;  // see produce()
  // Fibers whose appends return at once (periodic) must yield, or the first
  // fiber of each thread would be its only producer.
  bool yield_after_append = false;
  std::atomic<int> phase{kWarmup};
  std::atomic<uint64_t> started{0};
  std::atomic<uint64_t> parked{0};  // producers waiting out kPause
  std::atomic<uint64_t> ended{0};   // producers that returned (kStop or an error)
  std::atomic<uint64_t> errors{0};
  std::mutex error_mu;
  std::string first_error;  // guarded by error_mu
};

// Polls: a parked fiber must let the other fibers of its thread reach the
// pause too, and the pause lasts about one append.
int wait_out_pause(Shared& shared) {
  shared.parked.fetch_add(1);
  int phase;
  while ((phase = shared.phase.load()) == kPause) {
    boost::this_fiber::sleep_for(std::chrono::microseconds(100));
  }
  return phase;
}

void produce_appends(Shared& shared, ThreadTally& tally, uint64_t producer) {
  const uint64_t pool = shared.payloads.size();
  for (uint64_t seq = 0;; ++seq) {
    int phase = shared.phase.load();
    if (phase == kPause) phase = wait_out_pause(shared);
    if (phase == kStop) return;
    // Scattered, not in turn: producers walking the pool side by side would
    // put the same record into one flush again and again, and LZ4 would
    // find what a real workload does not have.
    const std::vector<std::byte>& payload = shared.payloads[mix((producer << 32) ^ seq) % pool];
    const auto begin = SteadyClock::now();
    const Status status = shared.engine.append(producer, seq, payload);
    const auto end = SteadyClock::now();
    if (!status.ok()) {
      if (shared.errors.fetch_add(1) == 0) {
        std::lock_guard lock(shared.error_mu);
        shared.first_error = status.to_string();
      }
      return;
    }
    if (phase == kMeasure) {
      tally.latency.record(static_cast<uint64_t>(
          std::chrono::duration_cast<std::chrono::nanoseconds>(end - begin).count()));
      ++tally.ops;
    }
    if (shared.yield_after_append) boost::this_fiber::yield();
  }
}

void produce(Shared& shared, ThreadTally& tally, uint64_t producer) {
  shared.started.fetch_add(1);
  produce_appends(shared, tally, producer);
  shared.ended.fetch_add(1);
}

void run_thread(const PointSpec& spec, Shared& shared, ThreadTally& tally, int thread,
                size_t stack_size) {
  const auto first_producer = static_cast<uint64_t>(thread) * static_cast<uint64_t>(spec.fibers);
  if (spec.fibers == 1) {
    produce(shared, tally, first_producer);
    return;
  }
  std::vector<boost::fibers::fiber> fibers;
  fibers.reserve(static_cast<size_t>(spec.fibers));
  for (int f = 0; f < spec.fibers; ++f) {
    fibers.emplace_back(std::allocator_arg, boost::fibers::fixedsize_stack(stack_size),
                        [&shared, &tally, id = first_producer + static_cast<uint64_t>(f)] {
                          produce(shared, tally, id);
                        });
  }
  for (auto& fiber : fibers) fiber.join();
}

}  // namespace

Result<PointResult> run_point(const PointSpec& spec, EngineSetup setup) {
  setup.record_size = spec.size;
  setup.fibers = spec.fibers;
  auto engine = open_engine(spec.engine, setup);
  if (!engine.ok()) return engine.status();
  BenchEngine& e = **engine;
  const std::vector<std::vector<std::byte>> payloads =
      make_payloads(spec.payload, spec.size, spec.seed);
  Shared shared{e, payloads};
  shared.yield_after_append = spec.fibers > 1 && !e.durable();
  // RocksDB's Put runs deep call chains; the log's and raw's appends do not.
  const size_t stack_size =
      e.suspends_fibers() ? spec.fiber_stack : std::max<size_t>(spec.fiber_stack, 256 * 1024);

  PointResult result;
  result.spec = spec;
  result.durable = e.durable();
  result.rss_before = resident_bytes();
  std::vector<std::unique_ptr<ThreadTally>> tallies;
  std::vector<std::thread> threads;
  for (int t = 0; t < spec.threads; ++t) {
    tallies.push_back(std::make_unique<ThreadTally>());
    threads.emplace_back(run_thread, std::cref(spec), std::ref(shared), std::ref(*tallies.back()),
                         t, stack_size);
  }
  const auto producers = static_cast<uint64_t>(spec.producers());
  while (shared.started.load() < producers && shared.errors.load() < producers) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  std::this_thread::sleep_for(spec.warmup);
  shared.phase.store(kPause);
  while (shared.parked.load() + shared.ended.load() < producers) {
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }

  const ProcessUsage usage_before = process_usage();
  const uint64_t syncs_before = e.syncs();
  const FlushedBytes flushed_before = e.flushed_bytes();
  const auto begin = SteadyClock::now();
  shared.phase.store(kMeasure);
  std::this_thread::sleep_for(spec.duration);
  shared.phase.store(kStop);
  result.rss_bytes = resident_bytes();
  for (auto& thread : threads) thread.join();
  const auto end = SteadyClock::now();
  result.usage = process_usage() - usage_before;
  result.syncs = e.syncs() - syncs_before;
  const FlushedBytes flushed_after = e.flushed_bytes();
  result.flushed = {flushed_after.image - flushed_before.image,
                    flushed_after.file - flushed_before.file};
  result.seconds = std::chrono::duration<double>(end - begin).count();
  for (const auto& tally : tallies) {
    result.latency.merge(tally->latency);
    result.ops += tally->ops;
  }
  result.errors = shared.errors.load();
  result.first_error = shared.first_error;
  CL_RETURN_IF_ERROR(e.close());
  return result;
}

}  // namespace commitlog::tools
