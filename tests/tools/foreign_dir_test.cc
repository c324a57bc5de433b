// SPDX-License-Identifier: Apache-2.0
// The commands that write a log never delete or overwrite what they did not
// create: a directory holding anything but a log is refused with exit 2 and
// a message naming the entry, and is left as it was; a command removes only
// what it made.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "tests/support/log_files.h"
#include "tests/support/run_cli.h"
#include "tests/support/temp_dir.h"

namespace commitlog::testing {
namespace {

namespace fs = std::filesystem;

// The names in `dir`, sorted.
std::vector<std::string> entries(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// A short run of each command that writes a log into `dir`.
std::vector<std::vector<std::string>> writers(const std::string& dir) {
  return {
      {"demo", "--dir", dir, "--threads", "1", "--fibers", "2", "--mutations", "3"},
      {"bench", "--dir", dir, "--engines", "commitlog", "--producers", "1", "--duration", "0.05s",
       "--warmup", "0.01s", "--policies", "batch"},
      {"stress", "--dir", dir, "--duration", "0.05", "--producers", "1", "--fibers", "1"},
  };
}

TEST_CASE("foreign directories: each command refuses a directory holding a file of someone else's, and leaves it") {
  TempDir tmp;
  std::ofstream(tmp.file("notes.txt")) << "mine";
  fs::create_directory(tmp.file("photos"));
  std::ofstream(tmp.file("photos/cat.jpg")) << "meow";
  for (const auto& args : writers(tmp.path())) {
    CAPTURE(args[0]);
    const CliResult r = run_cli(args);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("--dir " + tmp.path() + " holds notes.txt, which is not a commit log segment") !=
          std::string::npos);
    CHECK(entries(tmp.path()) == std::vector<std::string>{"notes.txt", "photos"});
    CHECK(slurp(tmp.file("notes.txt")) == "mine");
    CHECK(slurp(tmp.file("photos/cat.jpg")) == "meow");
  }
}

TEST_CASE("foreign directories: a sub-directory is foreign too, and a file where the directory should be is refused") {
  TempDir tmp;
  fs::create_directory(tmp.file("keep"));
  std::ofstream(tmp.file("plain")) << "x";
  for (const auto& args : writers(tmp.path())) {
    CAPTURE(args[0]);
    const CliResult r = run_cli(args);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("holds keep, which is not a commit log segment") != std::string::npos);
    std::vector<std::string> at_file = args;
    at_file[2] = tmp.file("plain");
    const CliResult f = run_cli(at_file);
    CHECK(f.exit_code == 2);
    CHECK(f.err.find(tmp.file("plain") + " is not a directory") != std::string::npos);
    CHECK(slurp(tmp.file("plain")) == "x");
    CHECK(fs::is_directory(tmp.file("keep")));
  }
}

TEST_CASE("foreign directories: demo appends to a log it finds and counts its mutations too") {
  TempDir tmp;
  const std::string dir = tmp.file("log");
  const std::vector<std::string> demo = {"demo", "--dir", dir, "--threads", "1", "--fibers", "2", "--mutations", "3"};
  const CliResult first = run_cli(demo);
  REQUIRE(first.exit_code == 0);
  const size_t segments = segment_files(dir).size();
  const CliResult second = run_cli(demo);
  CHECK(second.exit_code == 0);
  CHECK(second.out.find("replayed 12 mutations") != std::string::npos);
  CHECK(second.out.find("6 of them were in " + dir + " before this run") != std::string::npos);
  CHECK(segment_files(dir).size() > segments);
}

TEST_CASE("foreign directories: bench removes what it made and nothing else") {
  TempDir tmp;
  const std::string made = tmp.file("new/bench");
  std::vector<std::string> bench = writers(made)[1];
  CHECK(run_cli(bench).exit_code == 0);
  CHECK_FALSE(fs::exists(made));  // it made the directory, so it removed it
  CHECK(fs::is_directory(tmp.file("new")));
  const std::string given = tmp.file("given");
  fs::create_directory(given);
  bench = writers(given)[1];
  CHECK(run_cli(bench).exit_code == 0);
  CHECK(fs::is_directory(given));  // given, so kept, and left empty
  CHECK(entries(given).empty());
}

TEST_CASE("foreign directories: stress runs in a directory that holds only its log") {
  TempDir tmp;
  const std::string dir = tmp.file("log");
  const std::vector<std::string> stress = writers(dir)[2];
  REQUIRE(run_cli(stress).exit_code == 0);
  CHECK(run_cli(stress).exit_code == 0);
  CHECK(run_cli({"stress", "--check", "--dir", dir}).exit_code == 0);
}

TEST_CASE("foreign directories: the spare segment files a standard log leaves are its own, and stress runs again") {
  TempDir tmp;
  const std::string dir = tmp.file("log"), config = tmp.file("commitlog.yaml");
  std::ofstream(config) << "commitlog_disk_access_mode: standard\n";
  std::vector<std::string> stress = writers(dir)[2];
  stress.insert(stress.end(), {"--config", config});
  REQUIRE(run_cli(stress).exit_code == 0);
  const auto names = entries(dir);
  REQUIRE(std::any_of(names.begin(), names.end(), [](const std::string& n) { return n.ends_with(".spare"); }));
  const CliResult again = run_cli(stress);
  CHECK(again.exit_code == 0);
  CHECK(again.err == "");
  CHECK(run_cli({"stress", "--check", "--dir", dir}).exit_code == 0);
}

}  // namespace
}  // namespace commitlog::testing
