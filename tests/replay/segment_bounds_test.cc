// SPDX-License-Identifier: Apache-2.0
// What the readers read of a segment file is bounded by what its header
// allows, and that by what a writer makes: a file of several GiB named like
// a segment, most of it a hole, costs the memory its capacity does, never
// its size. Through the binary (verify, stat, dump: the replayer and the
// tools' loader) and through the log's own readers of old segments (the
// tables a segment holds, the seal of a crashed run).
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "commitlog/lifecycle/crashed_run_seal.h"
#include "commitlog/replay/segment_tables.h"
#include "segment/codec.h"
#include "segment/file_name.h"
#include "segment/format.h"
#include "tests/support/child_process.h"
#include "tests/support/segment_bytes.h"
#include "tests/support/temp_dir.h"

namespace commitlog::testing {
namespace {

constexpr uint64_t kGiB = uint64_t{1} << 30;
constexpr uint64_t kSparseSize = 8 * kGiB;
constexpr uint64_t kSegmentId = 1000;

// Writes `bytes` as segment kSegmentId of `dir`, extended by a hole to
// `size` bytes when that is larger; returns its path.
std::string write_segment(const TempDir& dir, const std::vector<std::byte>& bytes, uint64_t size = 0) {
  const std::string path = dir.file(segment_file_name(kSegmentId));
  {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    REQUIRE(out.good());
  }
  if (size > bytes.size()) REQUIRE(::truncate(path.c_str(), static_cast<off_t>(size)) == 0);
  return path;
}

// Sets the capacity of the header at the start of `file`, checksum and all.
void set_capacity(std::vector<std::byte>& file, uint64_t capacity) {
  SegmentHeader header;
  REQUIRE(decode_segment_header(file, &header) == HeaderProblem::kNone);
  header.capacity = capacity;
  encode_segment_header(header, std::span<std::byte, format::kHeaderSize>(file.data(), format::kHeaderSize));
}

struct MeasuredRun {
  int exit_code = -1;
  std::string output;  // stdout and stderr
  uint64_t peak_rss = 0;
};

// Runs the commitlog binary with `args`; its peak resident memory is its own
// (posix_spawn shares no pages with it that it would count).
MeasuredRun run_measured(const std::vector<std::string>& args) {
  TempDir io;
  std::vector<std::string> all{COMMITLOG_CLI};
  all.insert(all.end(), args.begin(), args.end());
  const pid_t pid = spawn(all, ChildOutput{ChildOutput::Kind::kTruncate, io.file("out")});
  REQUIRE(pid > 0);
  int status = 0;
  rusage usage{};
  REQUIRE(::wait4(pid, &status, 0, &usage) == pid);
  MeasuredRun run;
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  run.output = read_text_file(io.file("out"));
  run.peak_rss = static_cast<uint64_t>(usage.ru_maxrss) * 1024;
  return run;
}

// This process's peak resident memory (VmHWM).
uint64_t peak_rss() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  }
  return 0;
}

// Runs `work` in a forked child: how far its peak resident memory grew while
// `work` ran, or nullopt when `work` failed or the child died.
std::optional<uint64_t> peak_rss_growth(const std::function<bool()>& work) {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(fds[0]);
    const uint64_t before = peak_rss();
    const uint64_t growth = work() ? peak_rss() - before : UINT64_MAX;
    const bool sent = ::write(fds[1], &growth, sizeof growth) == sizeof growth;
    ::_exit(sent ? 0 : 1);
  }
  ::close(fds[1]);
  uint64_t growth = UINT64_MAX;
  const bool got = ::read(fds[0], &growth, sizeof growth) == sizeof growth;
  ::close(fds[0]);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  if (!got || !WIFEXITED(status) || WEXITSTATUS(status) != 0 || growth == UINT64_MAX) return std::nullopt;
  return growth;
}

// The damage read_segment_tables() names in the segment of `dir` (none: it
// holds table 7), after reading it, and sealing the run it ends, in a child
// whose memory must grow less than `limit`.
std::string tables_damage_within(const TempDir& dir, uint64_t limit) {
  const SegmentFile file{kSegmentId, dir.file(segment_file_name(kSegmentId))};
  std::string damage;
  {
    std::vector<std::byte> buffer;
    auto tables = read_segment_tables(*posix_file_system(), file, &buffer);
    REQUIRE_MESSAGE(tables.ok(), tables.status().to_string());
    damage = tables->damage;
    if (damage.empty()) {
      REQUIRE(tables->tables.size() == 1);
      CHECK(tables->tables[0].table == 7);
    }
  }
  const auto growth = peak_rss_growth([&] {
    std::vector<std::byte> fresh;
    return read_segment_tables(*posix_file_system(), file, &fresh).ok() &&
           seal_crashed_runs(*posix_file_system(), dir.path(), nullptr).ok();
  });
  REQUIRE(growth.has_value());
  CHECK(*growth < limit);
  return damage;
}

TEST_CASE("segment bounds: a plain segment of 8 GiB, a hole past its capacity, is read to its capacity") {
  SegmentBuilder b(kSegmentId, 64 * 1024);
  b.section({"a", "b"});
  TempDir dir;
  write_segment(dir, b.plain());
  const MeasuredRun small = run_measured({"verify", dir.path(), "--format", "json"});
  REQUIRE_MESSAGE(small.exit_code == 0, small.output);
  write_segment(dir, b.plain(), kSparseSize);
  const MeasuredRun large = run_measured({"verify", dir.path(), "--format", "json"});
  CHECK(large.exit_code == 0);
  CHECK(nlohmann::json::parse(large.output) == nlohmann::json::parse(small.output));
  CHECK(nlohmann::json::parse(large.output)["mutations"] == 2);
  CHECK(large.peak_rss < kGiB);
  for (const char* command : {"stat", "dump"}) {
    CAPTURE(command);
    const MeasuredRun run = run_measured({command, dir.path()});
    CHECK_MESSAGE(run.exit_code == 0, run.output);
    CHECK(run.peak_rss < kGiB);
  }
  CHECK(tables_damage_within(dir, kGiB).empty());
}

TEST_CASE("segment bounds: a header capacity no writer makes is a header problem, nothing sized by it") {
  SegmentBuilder b(kSegmentId, 64 * 1024);
  b.section({"a", "b"});
  std::vector<std::byte> file = b.plain();
  set_capacity(file, uint64_t{1} << 40);
  TempDir dir;
  const std::string path = write_segment(dir, file, kGiB / 2);
  const MeasuredRun verify = run_measured({"verify", dir.path()});
  CHECK(verify.exit_code != 0);
  const std::string problem = header_problem_name(HeaderProblem::kCapacityOutOfRange);
  CHECK_MESSAGE(verify.output.find(path + ": offset 0: " + problem) != std::string::npos, verify.output);
  CHECK(verify.peak_rss < kGiB / 4);
  const MeasuredRun stat = run_measured({"stat", dir.path()});
  CHECK(stat.output.find(problem) != std::string::npos);
  CHECK(stat.peak_rss < kGiB / 4);
  CHECK(tables_damage_within(dir, kGiB / 4) == problem);
}

TEST_CASE("segment bounds: a compressed file longer than its sections can make it is damage there") {
  SegmentBuilder b(kSegmentId, 64 * 1024);
  b.section({"a", "b"});
  TempDir dir;
  const std::vector<std::byte> file = b.compressed();
  const std::string path = write_segment(dir, file, kSparseSize);
  SegmentHeader header;
  REQUIRE(decode_segment_header(file, &header) == HeaderProblem::kNone);
  const MeasuredRun verify = run_measured({"verify", dir.path(), "--format", "json"});
  CHECK(verify.exit_code != 0);
  const nlohmann::json report = nlohmann::json::parse(verify.output);
  CHECK(report["mutations"] == 2);
  CHECK(report["bytes_read"] == segment_read_limit(header));
  REQUIRE(report["problems"].size() == 1);
  const nlohmann::json& problem = report["problems"][0];
  CHECK(problem["file"] == path);
  CHECK(problem["kind"] == damage_kind_name(DamageKind::kLongerThanWritten));
  CHECK(problem["stored_offset"] == segment_read_limit(header));
  CHECK(verify.peak_rss < kGiB);
  const MeasuredRun stat = run_measured({"stat", dir.path()});
  const std::string regions =
      fmt::format("(1 damaged regions, {} bytes)", kSparseSize - segment_read_limit(header));
  CHECK_MESSAGE(stat.output.find(regions) != std::string::npos, stat.output);
  CHECK(stat.peak_rss < kGiB);
  const MeasuredRun dump = run_measured({"dump", dir.path()});
  CHECK(dump.output.find(damage_kind_name(DamageKind::kLongerThanWritten)) != std::string::npos);
  CHECK(dump.peak_rss < kGiB);
  CHECK(tables_damage_within(dir, kGiB) == damage_kind_name(DamageKind::kLongerThanWritten));
}

}  // namespace
}  // namespace commitlog::testing
