// SPDX-License-Identifier: Apache-2.0
// `commitlog demo`: fibers on several threads append mutations and wait for
// durability; then the log is replayed and the counts are printed. A
// directory that already holds a log gets the new mutations after its own;
// one holding anything else, or held open by another process, is refused.
#include <atomic>
#include <chrono>
#include <map>
#include <thread>
#include <vector>

#include <boost/fiber/all.hpp>
#include <fmt/core.h>

#include "commitlog/commit_log.h"
#include "commitlog/replayer.h"
#include "tools/common/commands.h"
#include "tools/common/log_directory.h"

namespace commitlog::tools {
namespace {

struct DemoArgs {
  std::string dir = "/tmp/commitlog-demo";
  std::string policy = "batch";
  int threads = 4;
  int fibers = 250;
  int mutations = 20;
  bool lz4 = false;
};

// What the log in `dir` held before the demo (none when it does not exist).
Result<uint64_t> mutations_before(const std::string& dir) {
  if (!posix_file_system()->exists(dir)) return uint64_t{0};
  ReplayReport report = replay_directory(dir, {}, [](const ReplayedMutation&) { return Status{}; });
  if (!report.status.ok()) return report.status;
  return report.mutations;
}

int run_demo(const DemoArgs& args) {
  Options options;
  options.directory = args.dir;
  options.sync_policy = args.policy;
  options.policy.group_window = std::chrono::milliseconds(2);
  options.segment_size = 4u << 20;
  if (args.lz4) options.compression = Compression::kLz4;
  // The lock before the count: no other writer adds to the log in between.
  Status usable = check_log_directory("--dir", args.dir);
  auto lock = usable.ok() ? CommitLog::lock_directory(options) : Result<std::unique_ptr<FileLock>>(usable);
  auto before = lock.ok() ? mutations_before(args.dir) : Result<uint64_t>(lock.status());
  if (!before.ok()) {
    fmt::print(stderr, "commitlog demo: {}\n", before.status().message());
    return kExitUsage;
  }
  auto log = CommitLog::open(options, std::move(lock).value());
  if (!log.ok()) {
    fmt::print(stderr, "commitlog demo: {}\n", log.status().to_string());
    return kExitUsage;
  }
  std::atomic<uint64_t> acknowledged{0}, failed{0};
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int t = 0; t < args.threads; ++t) {
    threads.emplace_back([&, t] {
      std::vector<boost::fibers::fiber> fibers;
      for (int f = 0; f < args.fibers; ++f) {
        fibers.emplace_back([&, t, f] {
          for (int s = 0; s < args.mutations; ++s) {
            std::string payload = fmt::format("thread={} fiber={} seq={}", t, f, s);
            auto position = (*log)->append(static_cast<uint32_t>(f % 16), payload);
            (position.ok() ? acknowledged : failed).fetch_add(1);
          }
        });
      }
      for (auto& fiber : fibers) fiber.join();
    });
  }
  for (auto& thread : threads) thread.join();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const CommitLogStats stats = (*log)->stats();
  Status closed = (*log)->close();
  fmt::print("appended {} mutations ({} failed) from {} threads x {} fibers in {:.3f} s: {:.0f} durable appends/s\n",
             acknowledged.load(), failed.load(), args.threads, args.fibers, seconds,
             static_cast<double>(acknowledged.load()) / seconds);
  fmt::print("policy {}: {} flushes, {:.1f} mutations per flush, {} segment switches\n", args.policy,
             stats.flushes, stats.flushes ? static_cast<double>(stats.flushed_mutations) / static_cast<double>(stats.flushes) : 0.0,
             stats.segment_switches);
  if (!closed.ok()) {
    fmt::print(stderr, "commitlog demo: close: {}\n", closed.to_string());
    return kExitCorruption;
  }
  std::map<uint32_t, uint64_t> per_table;
  ReplayReport report = replay_directory(args.dir, {}, [&](const ReplayedMutation& m) {
    ++per_table[m.table];
    return Status{};
  });
  fmt::print("replayed {} mutations ({} payload bytes) from {} segments; torn tail {} bytes; {}\n",
             report.mutations, report.payload_bytes, report.segments, report.torn_tail_bytes,
             report.status.to_string());
  if (*before > 0) fmt::print("{} of them were in {} before this run\n", *before, args.dir);
  const bool all_back = report.status.ok() && report.mutations == *before + acknowledged.load();
  fmt::print("{}\n", all_back ? "every acknowledged mutation was replayed"
                              : "MISMATCH between acknowledged and replayed mutations");
  return all_back ? kExitOk : kExitCorruption;
}

}  // namespace

void add_demo_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<DemoArgs>();
  CLI::App* cmd = app.add_subcommand("demo", "append from fibers on several threads, then replay");
  cmd->add_option("--dir", args->dir,
                  "log directory: new, empty, or holding only a log (appended to)")
      ->capture_default_str();
  cmd->add_option("--policy", args->policy, "sync policy");
  cmd->add_option("--threads", args->threads, "producer threads")->check(CLI::Range(1, 1024));
  cmd->add_option("--fibers", args->fibers, "fibers per thread")->check(CLI::Range(1, 1000000));
  cmd->add_option("--mutations", args->mutations, "mutations per fiber")->check(CLI::Range(1, 1000000));
  cmd->add_flag("--lz4", args->lz4, "LZ4-compressed segments");
  cmd->callback([args, &exit_code] { exit_code = run_demo(*args); });
}

}  // namespace commitlog::tools
