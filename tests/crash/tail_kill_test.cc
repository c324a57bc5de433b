// SPDX-License-Identifier: Apache-2.0
// `commitlog tail --follow --position-file` beside `commitlog stress`, which
// is killed -9 and restarted over 100+ segment switches, in each disk access
// mode, plain and LZ4 (mmap only plain); the tail itself is stopped (SIGTERM)
// and restarted from its position file now and then. While the writer is
// stopped (SIGSTOP) now and then, every line the tail wrote out must lie below
// what the files prove durable. Its output, all runs concatenated, must be
// exactly `commitlog replay` of the final log, and `stress --check` must find
// every acknowledged mutation in that log.
#include <doctest/doctest.h>
#include <fmt/core.h>
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "commitlog/commit_log.h"
#include "commitlog/file_system.h"
#include "commitlog/replayer.h"
#include "tests/support/child_process.h"
#include "tests/support/durable_bounds.h"
#include "tests/support/run_cli.h"
#include "tests/support/temp_dir.h"

namespace commitlog {
namespace {

using testing::wait_status;

constexpr int kKillCycles = 6;
constexpr size_t kSegmentsPerCycle = 18;
constexpr size_t kStopsPerCycle = 3;

size_t segments_in(const std::string& dir) {
  auto files = list_segment_files(*posix_file_system(), dir);
  return files.ok() ? files->size() : 0;
}

size_t line_count(const std::string& text) {
  return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
}

// Where the tail's lines and replay's part, without printing thousands of lines.
std::string first_difference(const std::string& tailed, const std::string& replayed) {
  size_t at = 0;
  while (at < tailed.size() && at < replayed.size() && tailed[at] == replayed[at]) ++at;
  const size_t begin = at == 0 ? 0 : tailed.rfind('\n', at - 1) + 1;  // npos + 1: the first line
  auto excerpt = [&](const std::string& text) {
    return text.substr(begin, std::min<size_t>(120, text.find('\n', begin) - begin));
  };
  return fmt::format("line {} differs: tail '{}', replay '{}'",
                     line_count(tailed.substr(0, begin)) + 1, excerpt(tailed), excerpt(replayed));
}

// Waits up to `limit` for `done`, checking every few milliseconds.
template <typename Done>
bool wait_for(Done done, std::chrono::seconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

// The lines of `text` in [from, the end of its last whole line) that lie at
// or past their segment's bound; moves `from` to that end.
size_t lines_beyond(const std::string& text, size_t& from,
                    const std::map<uint64_t, uint64_t>& bounds, std::string& first) {
  const size_t end = text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1;
  size_t beyond = 0;
  for (size_t at = from; at < end; at = text.find('\n', at) + 1) {
    uint64_t segment = 0, offset = 0;
    REQUIRE(std::sscanf(text.c_str() + at, "{\"segment\":%" SCNu64 ",\"offset\":%" SCNu64, &segment,
                        &offset) == 2);
    const auto bound = bounds.find(segment);
    if (bound != bounds.end() && offset < bound->second) continue;
    if (beyond++ == 0) {
      first = fmt::format("{}:{} written out, durable only below {}", segment, offset,
                          bound == bounds.end() ? "nothing" : std::to_string(bound->second));
    }
  }
  from = end;
  return beyond;
}

void tail_beside_killed_writer(const std::string& access_mode, bool lz4) {
  CAPTURE(access_mode);
  CAPTURE(lz4);
  testing::TempDir tmp;
  if (access_mode == "direct" && !posix_file_system()->direct_io_block_size(tmp.path()).ok()) {
    MESSAGE("skipped: no O_DIRECT in " << tmp.path());
    return;
  }
  const std::string dir = tmp.file("log"), acks = tmp.file("acks"), position = tmp.file("position");
  const std::string config = tmp.file("commitlog.yaml");
  {
    FILE* f = std::fopen(config.c_str(), "w");
    REQUIRE(f != nullptr);
    std::fputs(fmt::format("commitlog_disk_access_mode: {}\n{}", access_mode,
                           lz4 ? "commitlog_compression:\n  class_name: LZ4Compressor\n" : "")
                   .c_str(),
               f);
    std::fclose(f);
  }
  const std::vector<std::string> workload = {"--dir", dir, "--acks", acks, "--max-size", "1000"};
  std::vector<std::string> writer = {COMMITLOG_CLI, "stress", "--config",       config,
                                     "--policy",    "batch",  "--segment-size", "16KiB",
                                     "--producers", "2",      "--fibers",       "4"};
  writer.insert(writer.end(), workload.begin(), workload.end());
  std::vector<std::string> tail_outputs;
  auto start_tail = [&] {
    tail_outputs.push_back(tmp.file(fmt::format("tail-{}.jsonl", tail_outputs.size())));
    const pid_t pid =
        testing::spawn({COMMITLOG_CLI, "tail", dir, "--follow", "--position-file", position,
                        "--out", tail_outputs.back(), "--poll-interval", "2"},
                       tail_outputs.back() + ".err");
    REQUIRE(pid > 0);
    return pid;
  };
  auto stop_tail = [&](pid_t pid) {
    REQUIRE(::kill(pid, SIGTERM) == 0);
    const int status = wait_status(pid);
    INFO(testing::read_text_file(tail_outputs.back() + ".err"));
    REQUIRE((WIFEXITED(status) && WEXITSTATUS(status) == 0));
  };

  auto tailed = [&] {
    std::string all;
    for (const std::string& f : tail_outputs) all += testing::read_text_file(f);
    return all;
  };
  size_t checked = 0;  // bytes of the tail's output checked while the writer was stopped
  // With the writer stopped its files stand still, so what they prove durable
  // now is at least what they proved when the tail wrote out a line, and a
  // tail that wrote out more than that cannot be covered by a later sync.
  auto check_durable = [&](pid_t writer_pid) {
    REQUIRE(::kill(writer_pid, SIGSTOP) == 0);
    int status = 0;
    REQUIRE(::waitpid(writer_pid, &status, WUNTRACED) == writer_pid);
    REQUIRE(WIFSTOPPED(status));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the tail's next polls
    const auto bounds = testing::durable_bounds(dir);
    const std::string text = tailed();
    REQUIRE(::kill(writer_pid, SIGCONT) == 0);
    std::string first;
    const size_t beyond = lines_beyond(text, checked, bounds, first);
    CHECK_MESSAGE(beyond == 0, first);
  };

  std::mt19937_64 rng(std::random_device{}());
  pid_t tail = start_tail();
  for (int cycle = 0; cycle < kKillCycles; ++cycle) {
    const std::string out = tmp.file(fmt::format("writer-{}.out", cycle));
    const size_t before = segments_in(dir);
    const pid_t pid = testing::spawn(writer, out);
    REQUIRE(pid > 0);
    for (size_t stop = 1; stop <= kStopsPerCycle; ++stop) {
      const size_t target = before + kSegmentsPerCycle * stop / kStopsPerCycle;
      CHECK(wait_for([&] { return segments_in(dir) >= target; }, std::chrono::seconds(60)));
      if (stop < kStopsPerCycle) check_durable(pid);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(rng() % 50));
    REQUIRE(::kill(pid, SIGKILL) == 0);
    const int status = wait_status(pid);
    INFO(testing::read_text_file(out));
    REQUIRE((WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL));
    if (cycle % 3 == 1) {
      stop_tail(tail);
      tail = start_tail();
    }
  }
  std::vector<std::string> last = writer;
  last.insert(last.end(), {"--duration", "0.2"});
  const int last_status = wait_status(testing::spawn(last, tmp.file("writer-last.out")));
  REQUIRE((WIFEXITED(last_status) && WEXITSTATUS(last_status) == 0));
  // A run that writes nothing: the one before it is then known to be over.
  Options empty;
  empty.directory = dir;
  REQUIRE(CommitLog::open(empty).ok());
  CHECK(segments_in(dir) >= 100);

  const testing::CliResult replay = testing::run_cli(COMMITLOG_CLI, {"replay", dir});
  REQUIRE(replay.exit_code == 0);
  CHECK(wait_for([&] { return line_count(tailed()) >= line_count(replay.out); },
                 std::chrono::seconds(60)));
  stop_tail(tail);
  const std::string all = tailed();
  CHECK(checked > 0);
  INFO("the position file says " << testing::read_text_file(position));
  CHECK(line_count(all) == line_count(replay.out));
  CHECK_MESSAGE(all == replay.out, first_difference(all, replay.out));
  std::vector<std::string> check = {"stress", "--check"};
  check.insert(check.end(), workload.begin(), workload.end());
  const testing::CliResult verdict = testing::run_cli(COMMITLOG_CLI, check);
  INFO(verdict.out << verdict.err);
  CHECK(verdict.exit_code == 0);
}

// One case per mode, so that ctest runs them side by side.
TEST_CASE(
    "tail kill: beside a writer killed -9, the tail writes out the final replay, durable when "
    "written: mmap") {
  tail_beside_killed_writer("mmap", false);
}

TEST_CASE(
    "tail kill: beside a writer killed -9, the tail writes out the final replay, durable when "
    "written: standard") {
  tail_beside_killed_writer("standard", false);
}

TEST_CASE(
    "tail kill: beside a writer killed -9, the tail writes out the final replay, durable when "
    "written: direct") {
  tail_beside_killed_writer("direct", false);
}

TEST_CASE(
    "tail kill: beside a writer killed -9, the tail writes out the final replay, durable when "
    "written: standard LZ4") {
  tail_beside_killed_writer("standard", true);
}

TEST_CASE(
    "tail kill: beside a writer killed -9, the tail writes out the final replay, durable when "
    "written: direct LZ4") {
  tail_beside_killed_writer("direct", true);
}

}  // namespace
}  // namespace commitlog
