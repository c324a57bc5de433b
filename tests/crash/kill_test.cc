// SPDX-License-Identifier: Apache-2.0
// The kill -9 loop of docs/testing.md, short enough for CI: start
// `commitlog stress`, kill it after a random delay, restart it (it replays
// and goes on), repeat; then one clean run and `stress --check`.
//   batch, group, adaptive: no acknowledged mutation may be lost, at any restart.
//   periodic: acknowledged mutations may be lost at a kill; each loss must be
//     a suffix (the check's "no gap") of what the log had not yet kept: none
//     of it acknowledged before the second-last round (seal or flush) the
//     run's acks show (the check's lost_kept). The loss window in wall time
//     (kill time minus the newest append the next run replayed) is reported;
//     it depends on the machine's load, so it is not bounded.
//   appends that wait later (`stress --wait later`: an append that returns
//     at once, acknowledged after wait_durable()): no loss under any policy,
//     plain or LZ4.
//   with discards (`stress --discard`, a store flushing behind its appends),
//     standard and direct, plain (discarded segments are recycled) and LZ4
//     (deleted): nothing acknowledged above the discard point is lost, and no
//     stale entry of a recycled file replays (the check's misplaced=0, no
//     duplicate, every payload as the formula says).
// The seed is printed; COMMITLOG_KILL_SEED=<n> repeats a run's delays.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <doctest/doctest.h>
#include <fmt/core.h>

#include "tests/support/child_process.h"
#include "tests/support/sanitizers.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_keys.h"

namespace commitlog {
namespace {

using testing::wait_status;

// Starts `args` with stdout and stderr going to `out`.
pid_t spawn(const std::vector<std::string>& args, const std::string& out) {
  const pid_t pid = testing::spawn(args, out);
  REQUIRE_MESSAGE(pid > 0, "could not start " << args[0]);
  return pid;
}

constexpr int kCycles = 20;
constexpr int kMinDelayMs = 50, kMaxDelayMs = 300;
constexpr const char* kMaxSize = "4000";  // payloads of 2 KiB on average
constexpr int kPeriodMs = 50;  // periodic: commitlog_sync_period, and so the marker interval

int64_t wall_clock_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The value of ` key=<n>` on the first line of `text` starting with `prefix`.
std::optional<int64_t> field(const std::string& text, const std::string& prefix, const std::string& key) {
  for (size_t at = 0; at < text.size();) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(at, end - at);
    at = end + 1;
    if (!line.starts_with(prefix)) continue;
    const size_t k = line.find(" " + key + "=");
    if (k == std::string::npos) return std::nullopt;
    return std::strtoll(line.c_str() + k + key.size() + 2, nullptr, 10);
  }
  return std::nullopt;
}

uint64_t seed() {
  static const uint64_t value = [] {
    const char* env = std::getenv("COMMITLOG_KILL_SEED");
    return env != nullptr ? std::strtoull(env, nullptr, 10) : std::random_device{}();
  }();
  return value;
}

struct LoopResult {
  int appending_runs = 0;     // runs killed after they began to append
  int kills_leaving_spares = 0;  // kills after which the directory held a spare segment file
  // Over every run, from its last "stress: discarded" line (--discard).
  int64_t discards = 0, recycled = 0, deleted = 0;
  int64_t lost_at_starts = 0;  // lost_acks summed over the restarts
  // The longest span from the newest append the next run replayed to the kill,
  // over the runs that appended: for periodic, the loss window.
  int64_t max_window_us = -1;
  std::string verdict;
  std::string last_run;  // the clean last run's output, its "stress: done" line
};

// Spare segment files (CommitLog-<id>.spare) in `dir`.
int spare_files(const std::string& dir) {
  std::error_code ec;
  int n = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    n += entry.path().extension() == ".spare" ? 1 : 0;
  }
  return n;
}

// With --discard: adds what the run that printed `output` discarded, and the
// segments its log recycled and deleted, to `r`.
void count_discards(const std::string& output, LoopResult& r) {
  const std::string prefix = "stress: discarded ";
  const size_t last = output.rfind(prefix);
  if (last == std::string::npos) return;
  for (size_t at = output.find(prefix); at != std::string::npos; at = output.find(prefix, at + 1)) ++r.discards;
  const std::string line = output.substr(last);
  r.recycled += field(line, prefix, "segments_recycled").value_or(0);
  r.deleted += field(line, prefix, "segments_deleted").value_or(0);
}

// What one loop runs.
struct LoopShape {
  // The runs' sync policy flags, in turn: run i takes policies[i % size].
  std::vector<std::vector<std::string>> policies;
  bool allow_loss = false;
  int cycles = kCycles;
  std::string config;  // the lines of a commitlog.yaml the runs take, e.g. a disk access mode
  const char* last_seconds = "0.3";  // how long the last, clean run appends
  int min_delay_ms = kMinDelayMs, max_delay_ms = kMaxDelayMs;
  // The workload: small segments and large payloads, so that runs switch
  // segments, from two threads of four fibers each.
  const char* segment_size = "64KiB";
  const char* max_size = kMaxSize;
  const char* fibers = "4";
};

// Runs the loop in a fresh directory and returns what it saw.
LoopResult kill_loop(const LoopShape& shape) {
  testing::TempDir tmp;
  const std::string dir = tmp.file("log"), acks = tmp.file("acks");
  const std::vector<std::string> workload = {"--dir", dir, "--acks", acks, "--max-size", shape.max_size};
  std::vector<std::string> driver = {COMMITLOG_CLI, "stress", "--segment-size", shape.segment_size, "--producers", "2",
                                     "--fibers", shape.fibers};
  if (!shape.config.empty()) {
    const std::string yaml = tmp.file("commitlog.yaml");
    std::ofstream(yaml) << shape.config;
    driver.insert(driver.end(), {"--config", yaml});
  }
  driver.insert(driver.end(), workload.begin(), workload.end());
  auto run_flags = [&](int cycle) {
    std::vector<std::string> flags = driver;
    const auto& policy = shape.policies[static_cast<size_t>(cycle) % shape.policies.size()];
    flags.insert(flags.end(), policy.begin(), policy.end());
    return flags;
  };
  // The check reads the log with the config's keys, when it has any.
  std::vector<std::string> check_config;
  if (!shape.config.empty()) check_config = {"--config", tmp.file("commitlog.yaml")};
  std::mt19937_64 rng(seed() ^ std::hash<std::string>{}(shape.policies[0][1] + shape.config));
  std::uniform_int_distribution<int> delay_ms(shape.min_delay_ms, shape.max_delay_ms);

  LoopResult result;
  // The last killed run that appended and whose loss is not yet measured.
  struct Pending {
    int64_t from_us, kill_us;
  };
  std::optional<Pending> pending;
  auto on_start = [&](const std::string& output, const std::string& name) {
    const auto lost = field(output, "stress: start", "lost_acks");
    const auto lost_kept = field(output, "stress: start", "lost_kept");
    const auto newest = field(output, "stress: start", "newest_us");
    if (!lost || !newest) return;
    INFO(name << ":\n" << output);
    if (!shape.allow_loss) CHECK(*lost == 0);
    CHECK(lost_kept == std::optional<int64_t>(0));
    CHECK(field(output, "stress: start", "misplaced") == std::optional<int64_t>(0));
    result.lost_at_starts += *lost;
    if (pending) {
      result.max_window_us = std::max(result.max_window_us, pending->kill_us - std::max(*newest, pending->from_us));
      pending.reset();
    }
  };

  for (int cycle = 0; cycle < shape.cycles; ++cycle) {
    const std::string out = tmp.file(fmt::format("run-{}.out", cycle));
    const pid_t pid = spawn(run_flags(cycle), out);
    // Three runs in four are killed at a random moment after they began to
    // append, however long their replay took (sanitizer builds replay slowly);
    // every fourth at a random moment from its start, often during replay.
    if (cycle % 4 != 3) {
      for (int waited_ms = 0; waited_ms < 20000 && testing::read_text_file(out).find("stress: appending") == std::string::npos;
           waited_ms += 5) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms(rng)));
    const int64_t kill_us = wall_clock_us();
    REQUIRE(::kill(pid, SIGKILL) == 0);
    const int status = wait_status(pid);
    const std::string output = testing::read_text_file(out);
    INFO("cycle " << cycle << " output:\n" << output);
    REQUIRE_MESSAGE((WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL), "the driver ended before the kill");
    result.kills_leaving_spares += spare_files(dir) > 0 ? 1 : 0;
    count_discards(output, result);
    on_start(output, out);
    if (auto from = field(output, "stress: appending", "from_us")) {
      pending = Pending{*from, kill_us};
      ++result.appending_runs;
    }
  }

  // A last run that replays the last kill's log and ends cleanly.
  std::vector<std::string> last = run_flags(shape.cycles);
  last.insert(last.end(), {"--duration", shape.last_seconds});
  const std::string last_out = tmp.file("run-last.out");
  const int last_status = wait_status(spawn(last, last_out));
  const std::string last_output = testing::read_text_file(last_out);
  result.last_run = last_output;
  count_discards(last_output, result);
  INFO("last run output:\n" << last_output);
  REQUIRE((WIFEXITED(last_status) && WEXITSTATUS(last_status) == 0));
  on_start(last_output, last_out);

  std::vector<std::string> check = {COMMITLOG_CLI, "stress", "--check"};
  check.insert(check.end(), workload.begin(), workload.end());
  check.insert(check.end(), check_config.begin(), check_config.end());
  if (shape.allow_loss) check.push_back("--allow-loss");
  const std::string check_out = tmp.file("check.out");
  const int check_status = wait_status(spawn(check, check_out));
  result.verdict = testing::read_text_file(check_out);
  INFO("check output:\n" << result.verdict);
  CHECK((WIFEXITED(check_status) && WEXITSTATUS(check_status) == 0));
  CHECK(result.verdict.find("stress check: OK") != std::string::npos);
  CHECK(field(result.verdict, "stress check: OK", "acks").value_or(0) > 0);
  CHECK(field(result.verdict, "stress check: OK", "lost_kept") == std::optional<int64_t>(0));
  CHECK(field(result.verdict, "stress check: OK", "misplaced") == std::optional<int64_t>(0));
  return result;
}

void report(const std::string& policy, const LoopResult& r, int cycles = kCycles) {
  MESSAGE(fmt::format("kill -9 loop, {}: seed {}, {} cycles ({} killed while appending), acks lost at restarts {},"
                      " newest replayed append at most {:.1f} ms before a kill\n{}",
                      policy, seed(), cycles, r.appending_runs, r.lost_at_starts,
                      static_cast<double>(r.max_window_us) / 1000.0, r.verdict));
}

TEST_CASE("kill -9 loop: batch loses no acknowledged mutation") {
  const LoopResult r = kill_loop({.policies = {{"--policy", "batch"}}});
  report("batch", r);
  CHECK(r.appending_runs > kCycles / 2);
}

TEST_CASE("kill -9 loop: group loses no acknowledged mutation") {
  const LoopResult r = kill_loop({.policies = {{"--policy", "group", "--window", "2"}}});
  report("group (2 ms window)", r);
  CHECK(r.appending_runs > kCycles / 2);
}

TEST_CASE("kill -9 loop: adaptive loses no acknowledged mutation") {
  const LoopResult r = kill_loop({.policies = {{"--policy", "adaptive"}}});
  report("adaptive", r);
  CHECK(r.appending_runs > kCycles / 2);
}

// Appends that wait later under `policy`, plain and LZ4.
void wait_later_loops(const std::string& policy) {
  constexpr int kLaterCycles = kCycles / 2;
  for (const bool lz4 : {false, true}) {
    CAPTURE(lz4);
    std::vector<std::string> flags = {"--policy", policy, "--wait", "later"};
    if (policy == "group") flags.insert(flags.end(), {"--window", "2"});
    if (policy == "periodic") {
      flags.insert(flags.end(), {"--period", std::to_string(kPeriodMs), "--rate", "5000"});
    }
    const LoopResult r = kill_loop({.policies = {flags},
                                    .cycles = kLaterCycles,
                                    .config = lz4 ? "commitlog_compression:\n  class_name: LZ4Compressor\n" : ""});
    report(fmt::format("{}{}, waiting later", policy, lz4 ? " LZ4" : ""), r, kLaterCycles);
    CHECK(r.appending_runs > kLaterCycles / 2);
    CHECK(r.lost_at_starts == 0);
  }
}

TEST_CASE("kill -9 loop: appends that wait later lose no acknowledged mutation, periodic, plain and LZ4") {
  wait_later_loops("periodic");
}

TEST_CASE("kill -9 loop: appends that wait later lose no acknowledged mutation, batch, plain and LZ4") {
  wait_later_loops("batch");
}

TEST_CASE("kill -9 loop: appends that wait later lose no acknowledged mutation, group, plain and LZ4") {
  wait_later_loops("group");
}

TEST_CASE("kill -9 loop: appends that wait later lose no acknowledged mutation, adaptive, plain and LZ4") {
  wait_later_loops("adaptive");
}

// The long loop of an access mode, with discards (`stress --discard`, each
// run discarding every table up to a point about two segments behind its
// newest acknowledgement, noted in the acks file first): kLongCycles kills,
// each 5 to 40 ms after the run began to append (or from its start, often
// during replay), in epochs of kEpochCycles in a fresh directory, each ended
// by a clean run and the check. The durable policies take the runs in turn;
// in standard and direct, epochs alternate plain segments (recycled: a later
// segment written over the file, its old bytes in place) and LZ4 (deleted),
// and the runs' counters, printed after each discard, say which happened, so
// a loop that stopped recycling fails. A sanitizer build runs a tenth.
constexpr int kLongCycles = testing::kSanitizer ? 100 : 1000;
constexpr int kEpochCycles = testing::kSanitizer ? 50 : 100;

void long_loop(std::string_view mode) {
  const std::vector<std::vector<std::string>> policies = {{"--policy", "batch", "--discard"},
                                                          {"--policy", "group", "--window", "2", "--discard"},
                                                          {"--policy", "adaptive", "--discard"}};
  const bool recycles = mode != "mmap";  // mmap deletes discarded segments, and has no LZ4
  int64_t recycled_plain = 0, recycled_lz4 = 0, deleted_plain = 0, deleted_lz4 = 0, discards = 0, kills_leaving_spares = 0;
  int appending_runs = 0;
  for (int epoch = 0; epoch < kLongCycles / kEpochCycles; ++epoch) {
    const bool lz4 = recycles && epoch % 2 == 1;
    const std::string config = fmt::format("commitlog_disk_access_mode: {}\n{}", mode,
                                           lz4 ? "commitlog_compression:\n  class_name: LZ4Compressor\n" : "");
    CAPTURE(epoch);
    CAPTURE(config);
    const LoopResult r = kill_loop(
        {.policies = policies, .cycles = kEpochCycles, .config = config, .min_delay_ms = 5, .max_delay_ms = 40});
    INFO("last run:\n" << r.last_run);
    CHECK(r.appending_runs > kEpochCycles / 2);
    CHECK(r.lost_at_starts == 0);
    // Acknowledged mutations were discarded and are gone: the check's
    // allowance was used, not idle.
    CHECK(field(r.verdict, "stress check: OK", "discarded").value_or(0) > 0);
    CHECK(r.discards > 0);
    (lz4 ? recycled_lz4 : recycled_plain) += r.recycled;
    (lz4 ? deleted_lz4 : deleted_plain) += r.deleted;
    discards += r.discards;
    kills_leaving_spares += r.kills_leaving_spares;
    appending_runs += r.appending_runs;
  }
  MESSAGE(fmt::format("kill -9 long loop, {} with discards: seed {}, {} cycles ({} killed while appending), "
                      "{} discards, segments recycled {} plain and {} LZ4, deleted {} plain and {} LZ4, {} kills left a spare file",
                      mode, seed(), kLongCycles, appending_runs, discards, recycled_plain, recycled_lz4, deleted_plain,
                      deleted_lz4,
                      kills_leaving_spares));
  CHECK(recycled_lz4 == 0);
  if (recycles) {
    CHECK(recycled_plain > 0);
    CHECK(deleted_lz4 > 0);
  } else {
    CHECK(recycled_plain == 0);
    CHECK(deleted_plain > 0);
  }
}

TEST_CASE("kill -9 long loop with discards: standard, durable policies in turn, plain and LZ4") { long_loop("standard"); }

TEST_CASE("kill -9 long loop with discards: direct, durable policies in turn, plain and LZ4") { long_loop("direct"); }

TEST_CASE("kill -9 long loop with discards: mmap, durable policies in turn") { long_loop("mmap"); }

TEST_CASE("kill -9 loop: encrypted, every access mode, sealed entries and LZ4, durable policies in turn") {
  constexpr int kEncryptedCycles = 6;
  testing::TempDir keys_dir;
  const std::string keys = keys_dir.file("keys");
  testing::write_key_file(keys, {1, 2});
  const std::vector<std::vector<std::string>> policies = {
      {"--policy", "batch"}, {"--policy", "group", "--window", "2"}, {"--policy", "adaptive"}};
  size_t turn = 0;
  for (const char* mode : {"standard", "direct", "mmap"}) {
    for (const char* compression : {"", "commitlog_compression:\n  class_name: LZ4Compressor\n"}) {
      if (std::string_view(mode) == "mmap" && *compression != '\0') continue;  // LZ4 needs a buffered mode
      const std::string config = fmt::format(
          "commitlog_disk_access_mode: {}\n{}transparent_data_encryption_options:\n  enabled: true\n"
          "  key_provider:\n    - class_name: FileKeyProvider\n      parameters:\n        - key_file: {}\n",
          mode, compression, keys);
      CAPTURE(config);
      const auto& policy = policies[turn++ % policies.size()];
      const LoopResult r = kill_loop({.policies = {policy}, .cycles = kEncryptedCycles, .config = config});
      report(fmt::format("{} {} encrypted{}", policy[1], mode, *compression != '\0' ? " LZ4" : ""), r,
             kEncryptedCycles);
      CHECK(r.appending_runs > kEncryptedCycles / 2);
    }
  }
}

// Sealed payloads up to 3 MiB from plain threads in direct: those of more
// than a MiB are written as they are sealed, a MiB at a time, by their
// producers (asynchronous I/O), which a kill stops with pieces in flight.
TEST_CASE("kill -9 loop: encrypted direct, payloads of several MiB written as they are sealed") {
  constexpr int kLargeCycles = 8;
  testing::TempDir keys_dir;
  const std::string keys = keys_dir.file("keys");
  testing::write_key_file(keys, {1});
  const std::string config = fmt::format(
      "commitlog_disk_access_mode: direct\ntransparent_data_encryption_options:\n  enabled: true\n"
      "  key_provider:\n    - class_name: FileKeyProvider\n      parameters:\n        - key_file: {}\n",
      keys);
  const LoopResult r = kill_loop({.policies = {{"--policy", "batch"}, {"--policy", "adaptive"}},
                                  .cycles = kLargeCycles,
                                  .config = config,
                                  .segment_size = "16MiB",
                                  .max_size = "3MiB",
                                  .fibers = "1"});
  report("batch and adaptive, direct encrypted, up to 3 MiB", r, kLargeCycles);
  CHECK(r.appending_runs > kLargeCycles / 2);
  CHECK(field(r.last_run, "stress: done", "direct_writes").value_or(0) > 0);
}

TEST_CASE("kill -9 loop: periodic loses nothing the log had sealed") {
  // Paced, so twenty cycles stay a few MiB.
  const LoopResult r =
      kill_loop({.policies = {{"--policy", "periodic", "--period", std::to_string(kPeriodMs), "--rate", "5000"}},
                 .allow_loss = true});
  report(fmt::format("periodic ({} ms period)", kPeriodMs), r);
  CHECK(r.appending_runs > kCycles / 2);
}

}  // namespace
}  // namespace commitlog
