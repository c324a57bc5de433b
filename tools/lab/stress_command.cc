// SPDX-License-Identifier: Apache-2.0
// `commitlog stress`: the driver that crash tests run and kill, and `--check`,
// which judges what it left behind. docs/testing.md describes the loops
// built on it; tools/lab/stress_workload.h holds the workload's formula,
// stress_acks.h the acks file.
//
//   commitlog stress --dir DIR [--config FILE] [--policy NAME] [--period MS]
//       [--window MS] [--segment-size SIZE] [--producers N] [--fibers M]
//       [--max-size SIZE] [--acks FILE [--discard]] [--duration SECONDS]
//       [--rate PER_SECOND] [--wait policy|durable|later]
//     Refuses a DIR holding anything but a log, and one another process
//     holds open (the log's lock, taken before anything is read or written).
//     Replays DIR if it holds a log (strict: only each run's torn tail may
//     be damaged), then appends from N threads x M fibers (stress_driver.h);
//     producer P = t*M + f continues after its highest replayed S and above
//     its highest S acknowledged at or below FILE's discard point. It writes
//     "run\n" to FILE, then a line per acknowledged append with one
//     write(2), so the line survives a kill -9. --discard discards the log
//     behind the acknowledgements as a store's flushes would, each point
//     written to FILE and synced first (stress_discarder.h). Runs until
//     killed, or for --duration seconds and then closes the log. --rate
//     paces the producers (total appends per second; default 0, as fast as
//     the policy lets them). --wait says when an append is acknowledged: as
//     the policy says (the default), once durable under any policy
//     (AppendWait::kDurable), or after an append that does not wait and then
//     CommitLog::wait_durable() (later). Flags override the values of --config.
//   commitlog stress --check --dir DIR [--acks FILE] [--max-size SIZE] [--allow-loss]
//     Replays DIR, checks every payload and each producer's S sequence and
//     compares with FILE; prints one verdict line.
//
// Lines on stdout, each written with one write(2) so that a killed run's
// output is complete up to the kill (the kill loops parse them):
//   stress: start replayed=<n> producers=<n> segments=<n> torn_tail_bytes=<n>
//           newest_us=<latest append time replayed> acks=<n> lost_acks=<n>
//           lost_kept=<n> misplaced=<n> discarded=<n>
//           repaired_ack_bytes=<n: a partial last ack line cut off>
//   stress: appending from_us=<wall clock µs> policy=<name> producers=<n>
//           threads=<n> fibers=<n> wait=<policy|durable|later>[ discard]
//   stress: discarded up_to=<seg>:<off> segments_recycled=<n>
//           segments_deleted=<n> spare_segments=<n>     (--discard, after each)
//   stress: done seconds=<s> acked=<n> flushes=<n> segment_switches=<n>
//           discards=<n> segments_recycled=<n> segments_deleted=<n>
//           direct_writes=<n: payloads that bypassed the segment image>
//   stress check: OK|FAILED replayed=<n> producers=<n> acks=<n> lost=<n> ...
// lost_acks at start counts acknowledgements in FILE whose mutation the log
// does not hold and that no discard covered: always 0 for batch, group and
// adaptive, and for every policy with --wait durable or later; for
// periodic, what the kill cost. docs/testing.md has the check's verdict fields.
//
// Exit codes (tools/common/commands.h): 0 ok; 1 the log or the acks fail the check
// (and, for the driver, a log that does not hold the workload); 2 usage,
// input or I/O errors, including a failed append.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "commitlog/commit_log.h"
#include "commitlog/config.h"
#include "commitlog/lifecycle/directory_lock.h"
#include "tools/common/commands.h"
#include "tools/common/key_file_option.h"
#include "tools/common/log_directory.h"
#include "tools/common/size_option.h"
#include "tools/lab/stress_acks.h"
#include "tools/lab/stress_driver.h"
#include "tools/lab/stress_options.h"
#include "tools/lab/stress_workload.h"

namespace commitlog::tools {
namespace {

using namespace stress;

uint64_t wall_clock_us() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count());
}

// One line on stdout, unbuffered: a kill -9 keeps what was said.
template <typename... Args>
void say(fmt::format_string<Args...> format, Args&&... args) {
  write_all(STDOUT_FILENO, fmt::format(format, std::forward<Args>(args)...)).ignore();
}

// The directories of `dir` that do not exist yet, the deepest first.
std::vector<std::filesystem::path> missing_directories(const std::string& dir) {
  std::vector<std::filesystem::path> missing;
  std::error_code ec;
  std::filesystem::path p = std::filesystem::absolute(dir, ec).lexically_normal();
  if (!p.has_filename()) p = p.parent_path();  // "a/b/" is "a/b"
  for (; !ec && !p.empty(); p = p.parent_path()) {
    if (std::filesystem::symlink_status(p, ec).type() != std::filesystem::file_type::not_found) break;
    ec.clear();  // set for the path not found too
    missing.push_back(p);
    if (p == p.parent_path()) break;
  }
  return missing;
}

// After a failed run: removes `made` (the directories it made, the deepest
// first) while each is empty but for the log's lock file, which the run made
// there too. One holding a segment is kept, and so are those above it.
void remove_made_directories(const std::vector<std::filesystem::path>& made) {
  for (const std::filesystem::path& dir : made) {
    std::error_code ec;
    std::filesystem::directory_iterator entries(dir, ec), end;
    if (!ec && entries != end && entries->path().filename() == kLockFileName && std::next(entries) == end) {
      std::filesystem::remove(dir / kLockFileName, ec);
    }
    if (!std::filesystem::remove(dir, ec)) break;  // not empty: kept
  }
}

void print_problems(const std::vector<std::string>& problems) {
  for (const std::string& problem : problems) fmt::print(stderr, "  {}\n", problem);
}

// The replay's first corruption or input error as an exit code, after saying it.
int replay_failure(const char* who, const LogScan& scan) {
  fmt::print(stderr, "{}: replay: {}\n", who, scan.replay.status.to_string());
  return scan.replay.status.code() == ErrorCode::kCorruption ? kExitCorruption : kExitUsage;
}

// The highest discard point of --acks, which the scan needs first; nullopt
// without --acks or without discards.
Result<std::optional<Position>> discard_point_of(const StressArgs& args) {
  if (args.acks.empty()) return std::optional<Position>();
  return read_discard_point(args.acks);
}

std::string point_text(const std::optional<Position>& point) { return point ? point->to_string() : "none"; }

int drive(const StressArgs& args) {
  Status usable = check_log_directory("--dir", args.dir);
  auto options = usable.ok() ? build_options(args) : Result<Options>(usable);
  if (options.ok()) {
    if (Status s = check_driver_options(*options); !s.ok()) options = s;
  }
  // Before the acks are repaired and the log replayed: a run refused because
  // another one owns the directory changes nothing.
  auto lock = options.ok() ? CommitLog::lock_directory(*options) : Result<std::unique_ptr<FileLock>>(options.status());
  if (!lock.ok()) {
    fmt::print(stderr, "commitlog stress: {}\n", lock.status().message());
    return kExitUsage;
  }
  uint64_t repaired = 0;
  if (!args.acks.empty()) {
    auto dropped = repair_acks_file(args.acks);
    if (!dropped.ok()) {
      fmt::print(stderr, "commitlog stress: {}\n", dropped.status().to_string());
      return kExitUsage;
    }
    repaired = *dropped;
  }
  auto discarded = discard_point_of(args);
  if (!discarded.ok()) {
    fmt::print(stderr, "commitlog stress: {}\n", discarded.status().message());
    return kExitUsage;
  }
  const LogScan scan = scan_log(args.dir, args.max_size, *discarded, options->encryption);
  if (!scan.replay.status.ok()) return replay_failure("commitlog stress", scan);
  if (!scan.clean()) {
    fmt::print(stderr, "commitlog stress: {} does not hold this workload (--max-size {}):\n", args.dir,
               args.max_size);
    print_problems(scan.problems);
    return kExitCorruption;
  }
  AckReport acks;
  if (!args.acks.empty()) acks = analyze_acks(args.acks, scan, *discarded);
  if (!acks.status.ok()) {
    fmt::print(stderr, "commitlog stress: {}\n", acks.status.message());
    return kExitUsage;
  }
  say("stress: start replayed={} producers={} segments={} torn_tail_bytes={} newest_us={} acks={} lost_acks={}"
      " lost_kept={} misplaced={} discarded={} repaired_ack_bytes={}\n",
      scan.replay.mutations, scan.producers(), scan.replay.segments, scan.replay.torn_tail_bytes, scan.newest_us,
      acks.acks, acks.lost_at_end, acks.lost_kept, acks.misplaced, acks.discarded, repaired);
  if (acks.lost_at_end > 0 || acks.misplaced > 0) print_problems(acks.problems);
  // Each producer goes on after its highest replayed S, and above every S
  // acknowledged where the log was discarded: that one may be gone.
  std::vector<uint64_t> next = scan.next;
  next.resize(std::max(next.size(), acks.resume_at.size()), 0);
  for (size_t p = 0; p < acks.resume_at.size(); ++p) next[p] = std::max(next[p], acks.resume_at[p]);

  // The acks file first: one that cannot be opened leaves the log unopened.
  int ack_fd = -1;
  if (!args.acks.empty()) {
    ack_fd = ::open(args.acks.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (ack_fd < 0) {
      fmt::print(stderr, "commitlog stress: {}\n", Status::from_errno(errno, args.acks).to_string());
      return kExitUsage;
    }
  }
  auto log = CommitLog::open(*options, std::move(lock).value());
  if (!log.ok()) {
    fmt::print(stderr, "commitlog stress: {}\n", log.status().to_string());
    if (ack_fd >= 0) ::close(ack_fd);
    return kExitUsage;
  }
  if (ack_fd >= 0) {
    const Status written = write_all(ack_fd, "run\n");
    if (!written.ok()) {
      fmt::print(stderr, "commitlog stress: {}\n", written.to_string());
      ::close(ack_fd);
      return kExitUsage;
    }
  }
  DriverOptions driver_options{.threads = args.threads,
                               .fibers = args.fibers,
                               .max_size = args.max_size,
                               .duration = args.duration,
                               .rate = args.rate,
                               .wait = args.wait == "durable" ? AppendWait::kDurable
                                       : args.wait == "later" ? AppendWait::kNothing
                                                              : AppendWait::kPolicy,
                               .wait_later = args.wait == "later",
                               .discard = args.discard,
                               .acks = args.acks};
  // The counters as each discard returns: a killed run says what it recycled.
  CommitLog& opened = **log;
  Driver driver(opened, driver_options, ack_fd, std::move(next), [&opened](Position up_to) {
    const MetricsSnapshot m = opened.metrics();
    say("stress: discarded up_to={} segments_recycled={} segments_deleted={} spare_segments={}\n", up_to.to_string(),
        m.segments_recycled, m.segments_deleted, m.spare_segments);
  });
  const auto start = SteadyClock::now();
  say("stress: appending from_us={} policy={} producers={} threads={} fibers={} wait={}{}\n", wall_clock_us(),
      options->sync_policy, args.threads * args.fibers, args.threads, args.fibers, args.wait,
      args.discard ? " discard" : "");
  driver.run();
  const double seconds = std::chrono::duration<double>(SteadyClock::now() - start).count();
  const CommitLogStats stats = (*log)->stats();
  Status closed = (*log)->close();
  const MetricsSnapshot metrics = (*log)->metrics();
  if (ack_fd >= 0) ::close(ack_fd);
  say("stress: done seconds={:.3f} acked={} flushes={} segment_switches={} discards={} segments_recycled={}"
      " segments_deleted={} direct_writes={}\n",
      seconds, driver.acked(), stats.flushes, stats.segment_switches, driver.discards(), metrics.segments_recycled,
      metrics.segments_deleted, metrics.direct_writes);
  for (const Status& status : {driver.error(), closed}) {
    if (!status.ok()) {
      fmt::print(stderr, "commitlog stress: {}\n", status.to_string());
      return kExitUsage;
    }
  }
  return kExitOk;
}

int run_driver(const StressArgs& args) {
  const std::vector<std::filesystem::path> made = missing_directories(args.dir);
  const int code = drive(args);
  if (code != kExitOk) remove_made_directories(made);
  return code;
}

int run_check(const StressArgs& args) {
  // Each named with its flag: the message says which input is missing.
  for (const auto& [flag, path] : {std::pair{"--dir", args.dir}, std::pair{"--acks", args.acks}}) {
    std::error_code ec;
    if (!path.empty() && !std::filesystem::exists(path, ec)) {
      fmt::print(stderr, "commitlog stress --check: {} {}: {}\n", flag, path,
                 ec ? ec.message() : "no such file or directory");
      return kExitUsage;
    }
  }
  // The keys of an encrypted log: --key-file, or the --config's.
  auto options = build_options(args);
  if (!options.ok()) {
    fmt::print(stderr, "commitlog stress --check: {}\n", options.status().message());
    return kExitUsage;
  }
  auto discarded = discard_point_of(args);
  if (!discarded.ok()) {
    fmt::print(stderr, "commitlog stress --check: {}\n", discarded.status().message());
    return kExitUsage;
  }
  const LogScan scan = scan_log(args.dir, args.max_size, *discarded, options->encryption);
  if (!scan.replay.status.ok() && scan.replay.status.code() != ErrorCode::kCorruption) {
    return replay_failure("commitlog stress --check", scan);
  }
  AckReport acks;
  if (!args.acks.empty()) acks = analyze_acks(args.acks, scan, *discarded);
  if (!acks.status.ok()) {
    fmt::print(stderr, "commitlog stress --check: {}\n", acks.status.message());
    return kExitUsage;
  }
  if (!scan.replay.status.ok()) fmt::print(stderr, "replay: {}\n", scan.replay.status.to_string());
  print_problems(scan.problems);
  print_problems(acks.problems);
  if (acks.torn_last_line) fmt::print(stderr, "note: the acks file ends inside a line; that line is ignored\n");
  const bool ok =
      scan.clean() && acks.lost_kept == 0 && acks.misplaced == 0 && (args.allow_loss || acks.lost() == 0);
  say("stress check: {} replayed={} producers={} acks={} lost={} lost_at_kills={} lost_at_end={} loss_events={}"
      " max_lost_per_event={} lost_kept={} misplaced={} discarded={} discard_point={} mismatches={} gaps={}"
      " duplicates={} segments={} torn_tail_bytes={}{}{}\n",
      ok ? "OK" : "FAILED", scan.replay.mutations, scan.producers(), acks.acks, acks.lost(), acks.lost_at_kills,
      acks.lost_at_end, acks.loss_events, acks.max_lost_per_event, acks.lost_kept, acks.misplaced, acks.discarded,
      point_text(*discarded), scan.mismatches, scan.gaps, scan.duplicates, scan.replay.segments,
      scan.replay.torn_tail_bytes, args.allow_loss ? " (loss allowed)" : "",
      scan.replay.status.ok() ? "" : " replay=corruption");
  return ok ? kExitOk : kExitCorruption;
}

}  // namespace

void add_stress_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<StressArgs>();
  CLI::App* cmd = app.add_subcommand(
      "stress", "append a checkable workload until killed; --check judges what a run left behind");
  cmd->add_option("--dir", args->dir, "log directory; replayed first if it holds a log")->required();
  CLI::Option* acks = cmd->add_option("--acks", args->acks, "file of ack lines, one per acknowledged append");
  add_size_option(cmd, "--max-size", &args->max_size, "filler length modulus (the same for every run and --check)", 1,
                  uint64_t{1} << 30);
  cmd->add_flag("--check", args->check, "replay --dir and check it against the workload and --acks");
  cmd->add_flag("--allow-loss", args->allow_loss,
                "--check: report acknowledged mutations missing from the log without failing (periodic)");
  cmd->add_option("--config", args->config, "commitlog.yaml to take the options from; flags override it");
  add_key_file_option(cmd, &args->key_file);
  args->policy_flag = cmd->add_option("--policy", args->policy, "sync policy (default: the config's, or periodic)");
  args->period_flag = cmd->add_option("--period", args->period_ms,
                                      "commitlog_sync_period in ms (the lag block becomes 1.5 x it)")
                          ->check(CLI::PositiveNumber);
  args->window_flag = cmd->add_option("--window", args->window_ms, "commitlog_sync_group_window in ms")
                          ->check(CLI::PositiveNumber);
  args->segment_size_flag = add_size_option(cmd, "--segment-size", &args->segment_size, "commitlog_segment_size");
  cmd->add_option("--producers", args->threads, "producer threads (N)")->check(CLI::Range(1, 1024))->capture_default_str();
  cmd->add_option("--fibers", args->fibers, "fibers per producer thread (M; 1: the thread appends itself)")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  cmd->add_option("--duration", args->duration, "seconds to run, then close the log; 0: until killed")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--rate", args->rate, "appends per second of all producers together; 0: unpaced")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--wait", args->wait,
                  "when an append is acknowledged: policy (as the sync policy says), durable (once "
                  "durable, under any policy), later (an append that does not wait, then wait_durable)")
      ->check(CLI::IsMember({"policy", "durable", "later"}))
      ->capture_default_str();
  cmd->add_flag("--discard", args->discard,
                "discard the log behind the acknowledgements, as a store's flushes would, noting each point in "
                "--acks first")
      ->needs(acks);
  cmd->callback([args, &exit_code] { exit_code = args->check ? run_check(*args) : run_driver(*args); });
}

}  // namespace commitlog::tools
