// SPDX-License-Identifier: Apache-2.0
// `commitlog tail-bench [--dir DIR] [--policy NAME] [--producers N] [--size BYTES]
//                      [--duration SECONDS] [--repeat R] [--poll-interval MS]`:
// producer ops/s with and without a tail attached, and the tail's lag, from
// an append's acknowledgement (the moment it is durable, for the durable
// policies) to the moment the tail hands it out. Runs alternate (without,
// with) R times in one process; the report gives the medians and their ratio.
// The tail is the library's TailReader on its own thread, polling the live log
// directory every --poll-interval ms when it finds nothing new, as `commitlog
// tail --follow` does.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <fmt/core.h>

#include "commitlog/commit_log.h"
#include "commitlog/tail_reader.h"
#include "tools/lab/bench_measure.h"
#include "tools/common/commands.h"

namespace commitlog::tools {
namespace {

using Clock = std::chrono::steady_clock;

struct TailBenchArgs {
  std::string dir = "tail-bench";  // each run in a directory of its own below
  std::string policy = "batch";
  int producers = 4;
  uint64_t size = 100;
  double duration = 3;
  int repeat = 3;
  double poll_ms = 10;
};

uint64_t key(Position p) { return p.segment << 32 ^ p.offset; }
uint64_t nanos(Clock::time_point t) { return static_cast<uint64_t>(t.time_since_epoch().count()); }

struct RunResult {
  double ops_per_s = 0;
  LatencyHistogram lag;  // with a tail only
};

// One run in `dir`, which it creates and removes.
Result<RunResult> run_once(const TailBenchArgs& args, const std::string& dir, bool with_tail) {
  Options options;
  options.directory = dir;
  options.sync_policy = args.policy;
  auto log = CommitLog::open(options);
  if (!log.ok()) return log.status();
  std::atomic<bool> stop{false};
  std::vector<std::vector<std::pair<uint64_t, uint64_t>>> acked(static_cast<size_t>(args.producers));
  std::vector<std::pair<uint64_t, uint64_t>> emitted;
  Status tail_error;
  std::thread tail;
  if (with_tail) {
    tail = std::thread([&] {
      TailReader reader(dir, {});
      const auto interval = std::chrono::duration<double, std::milli>(args.poll_ms);
      while (true) {
        const bool last = stop.load();
        auto got = reader.poll([&](const ReplayedMutation& m) {
          emitted.emplace_back(key(m.position), nanos(Clock::now()));
          return Status{};
        });
        if (!got.ok()) {
          tail_error = got.status();
          return;
        }
        if (last && *got == 0) return;
        if (*got == 0) std::this_thread::sleep_for(interval);
      }
    });
  }
  const std::string payload(args.size, 'x');
  const auto started = Clock::now();
  std::vector<std::thread> producers;
  for (int t = 0; t < args.producers; ++t) {
    producers.emplace_back([&, t] {
      auto& mine = acked[static_cast<size_t>(t)];
      while (!stop.load(std::memory_order_relaxed)) {
        auto p = (*log)->append(1, payload);
        if (!p.ok()) return;
        mine.emplace_back(key(*p), nanos(Clock::now()));
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(args.duration));
  stop.store(true);
  for (std::thread& p : producers) p.join();
  const double seconds = std::chrono::duration<double>(Clock::now() - started).count();
  const Status closed = (*log)->close();
  // A run that writes nothing ends this one, so the tail can read it to its end.
  if (with_tail) {
    auto closer = CommitLog::open(options);
    tail.join();
    if (!closer.ok()) return closer.status();
    CL_RETURN_IF_ERROR(tail_error);
  }
  CL_RETURN_IF_ERROR(closed);
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
  RunResult result;
  uint64_t appends = 0;
  std::unordered_map<uint64_t, uint64_t> acked_at;
  for (const auto& mine : acked) {
    appends += mine.size();
    if (with_tail) for (const auto& [k, at] : mine) acked_at[k] = at;
  }
  result.ops_per_s = static_cast<double>(appends) / seconds;
  for (const auto& [k, at] : emitted) {
    auto it = acked_at.find(k);
    if (it != acked_at.end()) result.lag.record(at > it->second ? at - it->second : 0);
  }
  return result;
}

int run_tail_bench(const TailBenchArgs& args) {
  std::error_code error;
  if (std::filesystem::exists(args.dir, error) && !std::filesystem::is_empty(args.dir, error)) {
    fmt::print(stderr, "commitlog tail-bench: {}: not empty; give a new directory\n", args.dir);
    return kExitUsage;
  }
  std::vector<double> without, with, p50, p99;
  for (int r = 0; r < args.repeat; ++r) {
    for (bool tail : {false, true}) {
      auto result = run_once(args, fmt::format("{}/run-{}-{}", args.dir, r, tail ? "tail" : "alone"), tail);
      if (!result.ok()) {
        fmt::print(stderr, "commitlog tail-bench: {}\n", result.status().to_string());
        return kExitUsage;
      }
      (tail ? with : without).push_back(result->ops_per_s);
      if (tail) {
        p50.push_back(static_cast<double>(result->lag.quantile(0.5)) / 1000);
        p99.push_back(static_cast<double>(result->lag.quantile(0.99)) / 1000);
      }
      fmt::print("run {} {}: {:.0f} ops/s{}\n", r + 1, tail ? "with tail" : "without  ", result->ops_per_s,
                 tail ? fmt::format(", lag p50 {:.0f} us, p99 {:.0f} us", p50.back(), p99.back()) : "");
    }
  }
  const double a = median(without), b = median(with);
  fmt::print("| policy | producers | size | ops/s without tail | ops/s with tail | ratio | tail lag p50 | tail lag p99 |\n");
  fmt::print("|---|---|---|---|---|---|---|---|\n");
  fmt::print("| {} | {} | {} B | {:.0f} | {:.0f} | {:.3f} | {:.0f} us | {:.0f} us |\n", args.policy, args.producers,
             args.size, a, b, a > 0 ? b / a : 0, median(p50), median(p99));
  return kExitOk;
}

}  // namespace

void add_tail_bench_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<TailBenchArgs>();
  CLI::App* cmd = app.add_subcommand("tail-bench", "producer ops/s with and without a tail, and the tail's lag");
  cmd->group("");  // hidden: a benchmark aid, documented in docs/tools.md
  cmd->add_option("--dir", args->dir, "a new directory for the runs' logs, each removed after its run")
      ->capture_default_str();
  cmd->add_option("--policy", args->policy, "sync policy")->capture_default_str();
  cmd->add_option("--producers", args->producers, "producer threads")->check(CLI::Range(1, 1024))->capture_default_str();
  cmd->add_option("--size", args->size, "payload bytes")->check(CLI::Range(1, 1 << 20))->capture_default_str();
  cmd->add_option("--duration", args->duration, "seconds per run")->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_option("--repeat", args->repeat, "pairs of runs (without, with a tail)")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  cmd->add_option("--poll-interval", args->poll_ms, "ms the tail sleeps when it finds nothing new")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->callback([args, &exit_code] { exit_code = run_tail_bench(*args); });
}

}  // namespace commitlog::tools
