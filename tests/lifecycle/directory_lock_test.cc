// SPDX-License-Identifier: Apache-2.0
// One owner per log directory (commitlog/lifecycle/directory_lock.h): a second open of
// a directory a log holds is refused at once, in the same process and from
// another, naming the directory and the holder's process; the lock ends with
// close() or with the owner's process, kill -9 too; the read-only tools work
// beside a live writer and say that it is live.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <fmt/core.h>

#include "commitlog/commit_log.h"
#include "commitlog/file_system.h"
#include "tests/support/child_process.h"
#include "tests/support/eventually.h"
#include "tests/support/fault_file_system.h"
#include "tests/support/kv_process.h"
#include "tests/support/run_cli.h"
#include "tests/support/temp_dir.h"

namespace commitlog {
namespace {

using testing::CliResult;
using testing::run_cli;
using testing::TempDir;

Options options_for(const std::string& dir, FileSystem* fs = posix_file_system()) {
  Options o;
  o.directory = dir;
  o.file_system = fs;
  o.segment_size = 1 << 20;
  return o;
}

std::string refusal(const std::string& dir, int64_t pid, const char* whose = "") {
  return fmt::format("{}: the commit log is already open in process {}{} (lock file {}/LOCK)", dir, pid,
                     whose, dir);
}

std::optional<int64_t> holder(const std::string& dir) {
  auto held = posix_file_system()->lock_holder(dir + "/LOCK");
  REQUIRE(held.ok());
  return *held;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The wait status of `pid` once it exits; nullopt if it has not within a
// minute, and then it is killed.
std::optional<int> exit_status(pid_t pid) {
  int status = 0;
  if (testing::eventually([&] { return ::waitpid(pid, &status, WNOHANG) == pid; })) return status;
  ::kill(pid, SIGKILL);
  testing::wait_status(pid);
  return std::nullopt;
}

TEST_CASE("directory lock: a second open of a directory in this process is refused, naming it, and close frees it") {
  TempDir tmp;
  const std::string dir = tmp.file("log");
  auto first = CommitLog::open(options_for(dir));
  REQUIRE(first.ok());
  REQUIRE((*first)->append(1, "kept").ok());

  auto second = CommitLog::open(options_for(dir));
  REQUIRE_FALSE(second.ok());
  CHECK(second.status().code() == ErrorCode::kBusy);
  CHECK(second.status().message() == refusal(dir, ::getpid(), ", this one"));
  // The path spelled otherwise is the same directory.
  CHECK(CommitLog::open(options_for(tmp.path() + "//log/")).status().code() == ErrorCode::kBusy);
  CHECK(CommitLog::lock_directory(options_for(dir)).status().code() == ErrorCode::kBusy);
  // The refused opens changed nothing: the first log goes on.
  REQUIRE((*first)->append(1, "after").ok());
  REQUIRE((*first)->sync().ok());

  REQUIRE((*first)->close().ok());
  CHECK_FALSE(holder(dir).has_value());
  auto third = CommitLog::open(options_for(dir));
  REQUIRE(third.ok());
  third->reset();  // destruction closes, and frees the lock too
  CHECK(CommitLog::open(options_for(dir)).ok());
}

TEST_CASE("directory lock: LOCK names the holder, lock_holder() sees a live writer without taking the lock") {
  TempDir tmp;
  const std::string dir = tmp.file("log");
  CHECK_FALSE(holder(dir).has_value());  // no directory, no lock file: no writer
  auto log = CommitLog::open(options_for(dir));
  REQUIRE(log.ok());
  CHECK(testing::read_text_file(dir + "/LOCK") == fmt::format("{}\n", ::getpid()));
  CHECK(holder(dir) == std::optional<int64_t>(::getpid()));
  CHECK(holder(dir) == std::optional<int64_t>(::getpid()));  // probing took nothing
  REQUIRE((*log)->close().ok());
  CHECK_FALSE(holder(dir).has_value());
  // The file stays, naming the last holder; it does not hold the directory.
  CHECK(testing::read_text_file(dir + "/LOCK") == fmt::format("{}\n", ::getpid()));
}

TEST_CASE("directory lock: lock_directory() then open() with it, and a lock of another directory is refused") {
  TempDir tmp;
  const Options a = options_for(tmp.file("a"));
  auto lock = CommitLog::lock_directory(a);
  REQUIRE(lock.ok());
  CHECK(holder(a.directory) == std::optional<int64_t>(::getpid()));
  CHECK(CommitLog::open(a).status().code() == ErrorCode::kBusy);  // it holds the directory already

  auto other = CommitLog::lock_directory(options_for(tmp.file("b")));
  REQUIRE(other.ok());
  auto wrong = CommitLog::open(a, std::move(other).value());
  REQUIRE_FALSE(wrong.ok());
  CHECK(wrong.status().code() == ErrorCode::kInvalidArgument);
  CHECK_FALSE(holder(tmp.file("b")).has_value());  // the refused open dropped that lock

  auto log = CommitLog::open(a, std::move(lock).value());
  REQUIRE(log.ok());
  CHECK(CommitLog::open(a).status().code() == ErrorCode::kBusy);
  log->reset();
  CHECK(CommitLog::open(a).ok());
  // The same directory however it is spelled.
  auto slashed = CommitLog::lock_directory(options_for(tmp.file("c") + "/./"));
  REQUIRE(slashed.ok());
  CHECK(CommitLog::open(options_for(tmp.file("c")), std::move(slashed).value()).ok());
  // Through a symbolic link "link/../d" is beside the link's target, not beside the link.
  std::filesystem::create_directories(tmp.file("deep/below"));
  std::filesystem::create_directories(tmp.file("deep/d"));
  std::filesystem::create_directory_symlink(tmp.file("deep/below"), tmp.file("link"));
  auto linked = CommitLog::lock_directory(options_for(tmp.file("link") + "/../d"));
  REQUIRE(linked.ok());
  CHECK(CommitLog::open(options_for(tmp.file("d")), std::move(linked).value()).status().code() ==
        ErrorCode::kInvalidArgument);
}

TEST_CASE("directory lock: through the fault file system a second open is refused, and an open that fails frees it") {
  testing::FaultFileSystem fs;
  auto first = CommitLog::open(options_for(testing::kLogDir, &fs));
  REQUIRE(first.ok());
  auto second = CommitLog::open(options_for(testing::kLogDir, &fs));
  REQUIRE_FALSE(second.ok());
  CHECK(second.status().message() == refusal(testing::kLogDir, ::getpid(), ", this one"));
  // Another file system is another disk.
  testing::FaultFileSystem elsewhere;
  CHECK(CommitLog::open(options_for(testing::kLogDir, &elsewhere)).ok());
  first->reset();

  // The log's first segment cannot be made: the open fails after taking
  // the lock, and lets it go.
  fs.inject(testing::Op::kOpen, EIO);
  REQUIRE_FALSE(CommitLog::open(options_for(testing::kLogDir, &fs)).ok());
  fs.clear_faults();
  CHECK(CommitLog::open(options_for(testing::kLogDir, &fs)).ok());
}

// `commitlog stress` as the owner of `dir` in a child process, until killed.
class StressOwner {
 public:
  StressOwner(const std::string& dir, const std::string& out) : out_(out) {
    pid_ = testing::spawn({COMMITLOG_CLI, "stress", "--dir", dir, "--producers", "1", "--fibers", "1", "--rate", "200"},
                          testing::ChildOutput{testing::ChildOutput::Kind::kTruncate, out});
    REQUIRE(pid_ > 0);
    // It holds the lock before it replays; appending, it holds the log open.
    REQUIRE_MESSAGE(testing::eventually([&] { return contains(testing::read_text_file(out_), "stress: appending"); }),
                    testing::read_text_file(out_));
  }
  ~StressOwner() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      testing::wait_status(pid_);
    }
  }
  pid_t pid() const { return pid_; }
  void kill9() {
    REQUIRE(::kill(pid_, SIGKILL) == 0);
    const int status = testing::wait_status(pid_);
    CHECK(WIFSIGNALED(status));
    pid_ = -1;
  }

 private:
  std::string out_;
  pid_t pid_ = -1;
};

TEST_CASE("directory lock: a log another process holds is refused to the library and to `commitlog stress`, "
          "freed by kill -9") {
  TempDir tmp;
  const std::string dir = tmp.file("log");
  StressOwner owner(dir, tmp.file("owner.out"));
  CHECK(holder(dir) == std::optional<int64_t>(owner.pid()));

  auto log = CommitLog::open(options_for(dir));
  REQUIRE_FALSE(log.ok());
  CHECK(log.status().code() == ErrorCode::kBusy);
  CHECK(log.status().message() == refusal(dir, owner.pid()));

  const CliResult second = run_cli({"stress", "--dir", dir, "--duration", "0.05", "--producers", "1", "--fibers", "1",
                                    "--acks", tmp.file("acks")});
  CHECK(second.exit_code == 2);
  CHECK(second.err == "commitlog stress: " + refusal(dir, owner.pid()) + "\n");
  CHECK(second.out.empty());  // refused before it replayed anything
  CHECK_FALSE(std::filesystem::exists(tmp.file("acks")));

  CHECK(run_cli({"demo", "--dir", dir, "--threads", "1", "--fibers", "1", "--mutations", "1"}).err ==
        "commitlog demo: " + refusal(dir, owner.pid()) + "\n");

  const pid_t dead = owner.pid();
  owner.kill9();
  // The kernel let the lock go with the process; LOCK stays, naming the dead one.
  CHECK_FALSE(holder(dir).has_value());
  CHECK(testing::read_text_file(dir + "/LOCK") == fmt::format("{}\n", dead));
  const CliResult next = run_cli({"stress", "--dir", dir, "--duration", "0.05", "--producers", "1", "--fibers", "1"});
  CHECK_MESSAGE(next.exit_code == 0, next.err);
  CHECK(CommitLog::open(options_for(dir)).ok());
}

TEST_CASE("directory lock: the read-only tools work beside a live writer and say it is live") {
  TempDir tmp;
  const std::string dir = tmp.file("log");
  StressOwner owner(dir, tmp.file("owner.out"));
  const std::string note =
      fmt::format("note: {} is open for writing by process {}; its newest segment may still be growing\n", dir,
                  owner.pid());
  const std::vector<std::vector<std::string>> readers = {{"verify", dir},
                                                         {"stat", dir},
                                                         {"dump", dir},
                                                         {"replay", dir, "--out", tmp.file("replayed")},
                                                         {"tail", dir, "--out", tmp.file("tailed")}};
  for (const auto& args : readers) {
    CAPTURE(args[0]);
    const CliResult r = run_cli(args);
    CHECK_MESSAGE(r.exit_code != 2, r.err);
    CHECK(contains(r.err, "commitlog " + args[0] + ": " + note));
  }
  CHECK(holder(dir) == std::optional<int64_t>(owner.pid()));  // none of them took the lock

  owner.kill9();
  for (const auto& args : readers) {
    CAPTURE(args[0]);
    CHECK_FALSE(contains(run_cli(args).err, "note:"));
  }
}

TEST_CASE("directory lock: a second commitlog-kv on a --dir is refused with exit 2 naming it, before it replays, "
          "and after kill -9 of the first the next starts") {
  TempDir tmp;
  const std::string dir = tmp.file("data");
  testing::KvServer first(dir, {}, tmp.file("first.out"));
  {
    testing::Client c(first.port());
    REQUIRE(c.command({"SET", "k", "v1"}).text == "OK");
  }

  const std::string out = tmp.file("second.out");
  const pid_t second = testing::spawn({testing::kv_binary(), "--dir", dir, "--port", "0"},
                                      testing::ChildOutput{testing::ChildOutput::Kind::kTruncate, out});
  REQUIRE(second > 0);
  const std::optional<int> status = exit_status(second);
  REQUIRE_MESSAGE(status.has_value(), "a second server started on a --dir in use:\n" << testing::read_text_file(out));
  REQUIRE(WIFEXITED(*status));
  CHECK(WEXITSTATUS(*status) == 2);
  // One line, naming the log's directory and the first server.
  CHECK(testing::read_text_file(out) == "commitlog-kv: " + refusal(dir + "/commitlog", first.pid()) + "\n");

  // The first one goes on as if nothing happened.
  {
    testing::Client c(first.port());
    CHECK(c.command({"GET", "k"}).text == "v1");
    REQUIRE(c.command({"SET", "k", "v2"}).text == "OK");
  }
  first.kill9();
  testing::KvServer next(dir, {}, tmp.file("next.out"));
  testing::Client c(next.port());
  CHECK(c.command({"GET", "k"}).text == "v2");
}

}  // namespace
}  // namespace commitlog
