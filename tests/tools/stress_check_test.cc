// SPDX-License-Identifier: Apache-2.0
// `commitlog stress --check` against a log that `stress --discard` discarded
// behind its acknowledgements (tools/lab/stress_acks.h): the discard lines
// are what excuse the acknowledged mutations that are gone, and each ack's
// position is where the replay must find it.
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <fmt/core.h>

#include "tests/support/run_cli.h"
#include "tests/support/temp_dir.h"

namespace commitlog {
namespace {

using testing::run_cli;

std::vector<std::string> acks_file_lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

void write_acks_file(const std::string& path, const std::vector<std::string>& lines) {
  std::ofstream out(path, std::ios::trunc);
  for (const std::string& line : lines) out << line << '\n';
}

// The number after " key=" in `text`, or -1.
long long verdict_field(const std::string& text, const std::string& key) {
  const size_t at = text.find(" " + key + "=");
  return at == std::string::npos ? -1 : std::stoll(text.substr(at + key.size() + 2));
}

// An ack line "<P> <S> <R> <seg>:<off>" with its offset moved by `delta`.
std::string ack_moved_by(const std::string& ack, long long delta) {
  std::istringstream in(ack);
  std::string p, s, r, position;
  in >> p >> s >> r >> position;
  const size_t colon = position.find(':');
  const long long offset = std::stoll(position.substr(colon + 1)) + delta;
  return fmt::format("{} {} {} {}:{}", p, s, r, position.substr(0, colon), offset);
}

TEST_CASE(
    "stress --check: the discard lines excuse discarded acknowledgements, and ack positions must "
    "match") {
  testing::TempDir tmp;
  const std::string dir = tmp.file("log"), acks = tmp.file("acks");
  const std::vector<std::string> workload = {"--dir", dir, "--acks", acks, "--max-size", "4000"};
  // Periodic and paced: the run switches segments many times however slowly
  // this machine syncs, and its close makes every append durable.
  std::vector<std::string> run = {"stress",   "--discard", "--duration", "0.5", "--segment-size",
                                  "64KiB",    "--producers", "2",        "--fibers", "4",
                                  "--policy", "periodic",  "--rate",     "4000"};
  run.insert(run.end(), workload.begin(), workload.end());
  const auto driven = run_cli(run);
  INFO(driven.out << driven.err);
  REQUIRE(driven.exit_code == 0);
  REQUIRE(verdict_field(driven.out, "discards") > 0);
  std::vector<std::string> check = {"stress", "--check"};
  check.insert(check.end(), workload.begin(), workload.end());

  const auto ok = run_cli(check);
  INFO(ok.out << ok.err);
  CHECK(ok.exit_code == 0);
  CHECK(ok.out.starts_with("stress check: OK "));
  CHECK(verdict_field(ok.out, "discarded") > 0);
  CHECK(verdict_field(ok.out, "misplaced") == 0);

  std::vector<std::string> lines = acks_file_lines(acks), acks_only;
  size_t last_ack = 0;  // in `lines`: the newest ack, which the log holds
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].starts_with("discard ")) continue;
    if (lines[i] != "run") last_ack = i;
    acks_only.push_back(lines[i]);
  }
  REQUIRE(acks_only.size() < lines.size());

  SUBCASE("without its discard lines, the discarded acknowledgements are losses") {
    write_acks_file(acks, acks_only);
    const auto r = run_cli(check);
    CHECK(r.exit_code == 1);
    CHECK(r.out.starts_with("stress check: FAILED "));
    CHECK(verdict_field(r.out, "discarded") == 0);
    CHECK(verdict_field(r.out, "lost") > 0);
  }
  SUBCASE("a mutation replayed before the position its ack names is misplaced") {
    lines[last_ack] = ack_moved_by(lines[last_ack], 8);
    write_acks_file(acks, lines);
    const auto r = run_cli(check);
    CHECK(r.exit_code == 1);
    CHECK(verdict_field(r.out, "misplaced") == 1);
    CHECK(verdict_field(r.out, "lost") == 0);
  }
  SUBCASE(
      "a mutation replayed after the position its ack names was lost and appended again, or is "
      "stale") {
    lines[last_ack] = ack_moved_by(lines[last_ack], -8);
    write_acks_file(acks, lines);
    const auto r = run_cli(check);
    CHECK(r.exit_code == 1);
    CHECK(verdict_field(r.out, "misplaced") == 0);
    CHECK(verdict_field(r.out, "lost_at_kills") == 1);
    CHECK(r.err.find("lost and appended again, or a stale entry") != std::string::npos);
  }
}

TEST_CASE(
    "stress --check: ack lines without a position and discard lines parse, malformed ones are "
    "input errors") {
  testing::TempDir tmp;
  const std::string dir = tmp.file("log"), acks = tmp.file("acks");
  REQUIRE(run_cli({"stress", "--dir", dir, "--acks", acks, "--duration", "0.05", "--max-size",
                   "100"})
              .exit_code == 0);
  // The run's acks as older files wrote them, without the position.
  std::string three_fields;
  for (const std::string& line : acks_file_lines(acks)) {
    const bool positioned = line.find(':') != std::string::npos;
    three_fields += (positioned ? line.substr(0, line.rfind(' ')) : line) + '\n';
  }
  REQUIRE(three_fields.find(':') == std::string::npos);
  const auto check = [&](const std::string& text) {
    std::ofstream(acks, std::ios::trunc) << text;
    return run_cli({"stress", "--check", "--dir", dir, "--acks", acks, "--max-size", "100"});
  };
  const auto old = check(three_fields);
  CHECK(old.exit_code == 0);
  CHECK(verdict_field(old.out, "acks") > 0);
  // A discard point below every segment excuses nothing.
  const auto below = check(three_fields + "discard 1:64\n");
  CHECK(below.exit_code == 0);
  CHECK(verdict_field(below.out, "discarded") == 0);
  CHECK(below.out.find(" discard_point=1:64 ") != std::string::npos);
  for (const char* bad :
       {"run\ndiscard\n", "run\ndiscard 1\n", "run\ndiscard 1:x\n", "run\n0 0 1 7\n"}) {
    CAPTURE(bad);
    const auto r = check(bad);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("not an ack line") != std::string::npos);
  }
}

}  // namespace
}  // namespace commitlog
