// SPDX-License-Identifier: Apache-2.0
// commitlog-kv's start: the recovery modes of --recovery, a replay that
// stops at SIGINT or SIGTERM, and a FIFO named like a segment refused
// without hanging. Skipped when commitlog-kv was not built.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "commitlog/commit_log.h"
#include "tests/support/child_process.h"
#include "tests/support/kv_process.h"
#include "tests/support/log_files.h"
#include "tests/support/temp_dir.h"

namespace commitlog {
namespace {

using testing::kv_binary;

// commitlog-kv with its stdout and stderr on one pipe, read line by line.
class Kv {
 public:
  explicit Kv(std::vector<std::string> flags) {
    std::vector<std::string> args = {kv_binary(), "--port", "0"};
    args.insert(args.end(), flags.begin(), flags.end());
    pid_ = testing::spawn(args, {testing::ChildOutput::Kind::kPipe, ""}, &out_);
    REQUIRE(pid_ > 0);
  }
  ~Kv() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    ::close(out_);
  }

  // Reads until a line holding `text` has been printed; false at the end of the output.
  bool wait_for(const std::string& text) {
    while (true) {
      const size_t at = seen_.find(text, searched_);
      if (at != std::string::npos && seen_.find('\n', at) != std::string::npos) {
        searched_ = seen_.find('\n', at) + 1;
        return true;
      }
      char buf[4096];
      const ssize_t n = ::read(out_, buf, sizeof buf);
      if (n <= 0) return false;
      seen_.append(buf, static_cast<size_t>(n));
    }
  }
  void signal(int sig) { REQUIRE(::kill(pid_, sig) == 0); }
  // Reads the rest of the output and returns the exit code.
  int wait() {
    while (wait_for("\x01")) {
    }
    int status = 0;
    REQUIRE(::waitpid(pid_, &status, 0) == pid_);
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  const std::string& output() const { return seen_; }

 private:
  pid_t pid_ = -1;
  int out_ = -1;
  std::string seen_;
  size_t searched_ = 0;
};

// A log of `count` small mutations of a table the server does not read:
// long enough to replay that a signal arrives while it does.
void write_long_log(const std::string& dir, int count) {
  Options options;
  options.directory = dir;
  options.sync_policy = "periodic";
  options.segment_size = 32 << 20;
  auto log = CommitLog::open(options);
  REQUIRE(log.ok());
  const std::string payload(16, 'x');
  std::vector<Mutation> batch(1000, Mutation{7, std::as_bytes(std::span(payload))});
  for (int i = 0; i < count; i += 1000) REQUIRE((*log)->append_batch(batch).ok());
  REQUIRE((*log)->close().ok());
}

TEST_CASE("kv recovery: SIGINT or SIGTERM during the replay stops the start") {
  testing::TempDir dir;
  write_long_log(dir.file("commitlog"), 3'000'000);
  for (int sig : {SIGINT, SIGTERM}) {
    CAPTURE(sig);
    Kv kv({"--dir", dir.path()});
    REQUIRE_MESSAGE(kv.wait_for("replaying"), kv.output());
    kv.signal(sig);
    CHECK(kv.wait() == 1);
    CHECK(kv.output().find("replay interrupted by a signal") != std::string::npos);
    CHECK(kv.output().find("listening") == std::string::npos);
  }
}

TEST_CASE("kv recovery: --recovery takes the four modes and refuses others") {
  for (const char* mode : {"tolerate-torn-tail", "absolute", "point-in-time", "skip", "strict"}) {
    CAPTURE(mode);
    testing::TempDir dir;
    Kv kv({"--dir", dir.path(), "--recovery", mode});
    REQUIRE_MESSAGE(kv.wait_for("listening"), kv.output());
    kv.signal(SIGTERM);
    CHECK(kv.wait() == 0);
  }
  testing::TempDir dir;
  Kv kv({"--dir", dir.path(), "--recovery", "lenient"});
  CHECK(kv.wait() == 2);
  CHECK(kv.output().find("unknown recovery mode 'lenient'") != std::string::npos);
}

TEST_CASE("kv recovery: a start refused at damage says how to start anyway, and --recovery skip does") {
  testing::TempDir dir;
  std::vector<Position> written;
  {
    Options options;
    options.directory = dir.file("commitlog");
    auto log = CommitLog::open(options);
    REQUIRE(log.ok());
    for (int i = 0; i < 10; ++i) {
      const std::string payload(8, static_cast<char>('a' + i));
      auto appended = (*log)->append(7, payload);
      REQUIRE(appended.ok());
      written.push_back(*appended);
    }
    REQUIRE((*log)->close().ok());
  }
  for (const SegmentFile& file : testing::segment_files(dir.file("commitlog"))) {
    if (file.id == written[5].segment) testing::flip_bit(file.path, written[5].offset);
  }
  Kv refused({"--dir", dir.path()});
  CHECK(refused.wait() == 1);
  CHECK_MESSAGE(refused.output().find("; to start anyway, losing the damaged writes: "
                                      "--recovery skip (passes over the damage) or --recovery point-in-time "
                                      "(keeps only what precedes it); docs/recovery.md explains the choices\n") !=
                    std::string::npos,
                refused.output());
  Kv skipped({"--dir", dir.path(), "--recovery", "skip"});
  REQUIRE_MESSAGE(skipped.wait_for("listening"), skipped.output());
  skipped.signal(SIGTERM);
  CHECK(skipped.wait() == 0);
}

TEST_CASE("kv recovery: a FIFO named like a segment is refused, naming it, without hanging") {
  testing::TempDir dir;
  std::filesystem::create_directories(dir.file("commitlog"));
  const std::string fifo = dir.file("commitlog/CommitLog-1-5.log");
  REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
  Kv kv({"--dir", dir.path()});
  CHECK(kv.wait() == 1);
  CHECK(kv.output().find(fifo + ": not a regular file") != std::string::npos);
}

}  // namespace
}  // namespace commitlog
