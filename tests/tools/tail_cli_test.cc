// SPDX-License-Identifier: Apache-2.0
// `commitlog tail` through the binary: its lines are replay's, a position
// file resumes it with nothing twice, bad input exits 2, a gap exits 1.
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "commitlog/commit_log.h"
#include "tests/support/child_process.h"
#include "tests/support/log_files.h"
#include "tests/support/run_cli.h"
#include "tests/support/temp_dir.h"

namespace commitlog {
namespace {

using testing::run_cli;
using testing::slurp;
using testing::write_text;

// One run of a writer that appends `n` mutations and closes, then an empty
// run: the tail may then read the first to its very end.
void write_run(const std::string& dir, int n, const std::string& tag) {
  Options o;
  o.directory = dir;
  o.segment_size = 16 << 10;
  {
    auto log = CommitLog::open(o);
    REQUIRE(log.ok());
    for (int i = 0; i < n; ++i) REQUIRE((*log)->append(static_cast<uint32_t>(i % 2), tag + std::to_string(i)).ok());
  }
  REQUIRE(CommitLog::open(o).ok());
}

TEST_CASE("tail cli: its lines are replay's, and a position file resumes it without duplicates") {
  testing::TempDir tmp;
  const std::string dir = tmp.file("log"), position = tmp.file("position");
  write_run(dir, 700, "first-");
  const auto first = run_cli(COMMITLOG_CLI, {"tail", dir, "--position-file", position});
  INFO(first.err);
  REQUIRE(first.exit_code == 0);
  CHECK(first.out == run_cli(COMMITLOG_CLI, {"replay", dir}).out);
  CHECK(first.err.find("700 mutations") != std::string::npos);
  write_run(dir, 300, "second-");
  const auto second = run_cli(COMMITLOG_CLI, {"tail", dir, "--position-file", position});
  REQUIRE(second.exit_code == 0);
  CHECK(second.err.find("300 mutations") != std::string::npos);
  CHECK(first.out + second.out == run_cli(COMMITLOG_CLI, {"replay", dir}).out);
  // Nothing new: nothing written, the position stays.
  const auto third = run_cli(COMMITLOG_CLI, {"tail", dir, "--position-file", position});
  CHECK(third.exit_code == 0);
  CHECK(third.out.empty());

  const auto one_table = run_cli(COMMITLOG_CLI, {"tail", dir, "--table", "1", "--format", "text"});
  REQUIRE(one_table.exit_code == 0);
  CHECK(one_table.out.find(" table 0 ") == std::string::npos);
  CHECK(one_table.out.find(" table 1 time_us ") != std::string::npos);
  CHECK(one_table.out.find(" size 7 first-1\n") != std::string::npos);
}

TEST_CASE("tail cli: bad input exits 2 and a deleted segment is a gap, exit 1") {
  testing::TempDir tmp;
  const std::string dir = tmp.file("log");
  write_run(dir, 100, "m");
  CHECK(run_cli(COMMITLOG_CLI, {"tail", dir, "--format", "xml"}).exit_code == 2);
  const auto from = run_cli(COMMITLOG_CLI, {"tail", dir, "--from", "12"});
  CHECK(from.exit_code == 2);
  CHECK(from.err.find("--from") != std::string::npos);
  CHECK(run_cli(COMMITLOG_CLI, {"tail", tmp.file("missing")}).exit_code == 2);
  write_text(tmp.file("bad-position"), "not a position\n");
  const auto bad = run_cli(COMMITLOG_CLI, {"tail", dir, "--position-file", tmp.file("bad-position")});
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("bad-position") != std::string::npos);
  // Read up to an offset of a segment that is no longer there.
  const auto gap = run_cli(COMMITLOG_CLI, {"tail", dir, "--from", "5:80"});
  CHECK(gap.exit_code == 1);
  CHECK(gap.err.find("gap") != std::string::npos);
  CHECK(gap.err.find("segment 5 ") != std::string::npos);
}

TEST_CASE("tail cli: the position file is replaced through a file of its own, past a crashed run's leftover") {
  testing::TempDir tmp;
  const std::string dir = tmp.file("log"), position = tmp.file("position");
  write_run(dir, 10, "m");
  write_text(position + ".tmp", "someone else's\n");
  write_text(position + ".tmp.0", "a crashed run's\n");
  for (int run = 0; run < 2; ++run) {  // the second hands out nothing again
    const auto tail = run_cli(COMMITLOG_CLI, {"tail", dir, "--position-file", position});
    INFO(tail.err);
    REQUIRE(tail.exit_code == 0);
    CHECK((run == 0) == !tail.out.empty());
  }
  CHECK(slurp(position + ".tmp") == "someone else's\n");
  CHECK(slurp(position + ".tmp.0") == "a crashed run's\n");
  CHECK(slurp(position).find(':') != std::string::npos);
}

TEST_CASE("tail cli: a position file that cannot be written is refused before any mutation is written") {
  testing::TempDir tmp;
  const std::string dir = tmp.file("log");
  write_run(dir, 10, "m");
  write_text(tmp.file("afile"), "x");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"/nonexistent/dir/p", "--position-file /nonexistent/dir/p: /nonexistent/dir: no such directory"},
      {tmp.file("afile/p"), "--position-file " + tmp.file("afile/p") + ": " + tmp.file("afile") + ": not a directory"},
      {dir, "--position-file " + dir + ": not a regular file"},
  };
  for (const auto& [file, message] : cases) {
    const std::string& position = file;  // clang before 16 cannot capture a structured binding in CAPTURE
    CAPTURE(position);
    const auto refused = run_cli(COMMITLOG_CLI, {"tail", dir, "--position-file", position});
    CHECK(refused.exit_code == 2);
    CHECK(refused.err == "commitlog tail: " + message + "\n");
    CHECK(refused.out.empty());
  }
}

TEST_CASE("tail cli: a missing directory or a file is refused in verify's words, an empty directory is fine") {
  testing::TempDir tmp;
  write_text(tmp.file("afile"), "x");
  for (const std::string& path : {tmp.file("nope"), tmp.file("afile")}) {
    CAPTURE(path);
    const auto tail = run_cli(COMMITLOG_CLI, {"tail", path});
    const auto verify = run_cli(COMMITLOG_CLI, {"verify", path});
    CHECK(tail.exit_code == 2);
    CHECK(tail.out.empty());
    REQUIRE(verify.err.starts_with("commitlog verify: "));
    CHECK(tail.err == "commitlog tail: " + verify.err.substr(18));
  }
  CHECK(run_cli(COMMITLOG_CLI, {"tail", tmp.file("nope")}).err ==
        "commitlog tail: " + tmp.file("nope") + ": no such directory\n");
  std::filesystem::create_directories(tmp.file("empty"));
  CHECK(run_cli(COMMITLOG_CLI, {"tail", tmp.file("empty")}).exit_code == 0);
}

TEST_CASE("tail cli: a poll interval is refused above an hour and SIGTERM stops the longest one taken") {
  testing::TempDir tmp;
  const std::string dir = tmp.file("log");
  write_run(dir, 10, "m");
  for (const char* interval : {"inf", "1e300", "9.3e15", "3600001", "nan", "0"}) {
    CAPTURE(interval);
    const auto refused = run_cli(COMMITLOG_CLI, {"tail", dir, "--poll-interval", interval});
    CHECK(refused.exit_code == 2);
    CHECK(refused.err.find("--poll-interval") != std::string::npos);
  }
  const pid_t pid = testing::spawn({COMMITLOG_CLI, "tail", dir, "-f", "--poll-interval", "3600000", "--out",
                                    tmp.file("out")},
                                   tmp.file("err"));
  REQUIRE(pid > 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  REQUIRE(kill(pid, SIGTERM) == 0);
  int status = 0;
  pid_t waited = 0;
  for (int i = 0; i < 1000 && waited == 0; ++i) {
    waited = waitpid(pid, &status, WNOHANG);
    if (waited == 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (waited == 0) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
  }
  CHECK(waited == pid);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("tail cli: an option given an empty value is refused naming it") {
  testing::TempDir tmp;
  const std::string dir = tmp.file("log");
  write_run(dir, 10, "m");
  const std::vector<std::vector<std::string>> cases = {
      {"tail", dir, "--table", ""},        {"replay", dir, "--table", ""},     {"tail", dir, "--key-file", ""},
      {"replay", dir, "--from", ""},       {"tail", dir, "--from", ""},        {"replay", dir, "--until", ""},
      {"replay", dir, "--out", ""},        {"tail", dir, "--out", ""},         {"tail", dir, "--position-file", ""},
      {"verify", ""}};
  for (const auto& args : cases) {
    const std::string option = args.size() > 2 ? args[2] : "DIR";
    CAPTURE(args[0]);
    CAPTURE(option);
    const auto refused = run_cli(COMMITLOG_CLI, args);
    CHECK(refused.exit_code == 2);
    CHECK(refused.err.find(option + ": empty value") != std::string::npos);
    CHECK(refused.out.empty());
  }
}

TEST_CASE("tail cli: a position past the end of its segment or of the log is refused naming it") {
  testing::TempDir tmp;
  const std::string dir = tmp.file("log");
  write_run(dir, 10, "m");
  const std::vector<SegmentFile> files = testing::segment_files(dir);
  REQUIRE(!files.empty());
  const uint64_t newest = files.back().id;
  // 16 KiB segments: no position lies at 20000.
  for (const std::string& from : {std::to_string(newest) + ":20000", std::to_string(newest + 1) + ":80"}) {
    CAPTURE(from);
    const auto refused = run_cli(COMMITLOG_CLI, {"tail", dir, "--from", from});
    CHECK(refused.exit_code == 2);
    CHECK(refused.err.find("position " + from + " lies past the ") != std::string::npos);
    CHECK(refused.out.empty());
  }
  // Where the tail goes on after the newest segment is no such position.
  CHECK(run_cli(COMMITLOG_CLI, {"tail", dir, "--from", std::to_string(newest + 1) + ":0"}).exit_code == 0);
}

}  // namespace
}  // namespace commitlog
