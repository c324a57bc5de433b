// SPDX-License-Identifier: Apache-2.0
// Replay that skips what a table already persisted (ReplayOptions::table_start)
// and what was written after a point in time (cutoff_time_us).
#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <fmt/core.h>

#include "commitlog/commit_log.h"
#include "commitlog/replayer.h"
#include "tests/support/temp_dir.h"

namespace commitlog {
namespace {

using testing::TempDir;

uint64_t now_us() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count());
}

struct WrittenMutation {
  uint32_t table;
  Position position;
  std::string payload;
};

struct FilteredReplay {
  std::vector<std::string> payloads;
  ReplayReport report;
};

FilteredReplay replay(const std::string& dir, const ReplayOptions& options) {
  FilteredReplay seen;
  seen.report = replay_directory(dir, options, [&](const ReplayedMutation& m) {
    seen.payloads.emplace_back(reinterpret_cast<const char*>(m.payload.data()), m.payload.size());
    return Status{};
  });
  REQUIRE_MESSAGE(seen.report.status.ok(), seen.report.status.to_string());
  return seen;
}

TEST_CASE("replay: table_start skips each table's persisted prefix, across segments") {
  TempDir dir;
  std::vector<WrittenMutation> written;
  {
    Options options;
    options.directory = dir.path();
    options.segment_size = 16 << 10;
    auto log = CommitLog::open(options);
    REQUIRE(log.ok());
    for (int i = 0; i < 300; ++i) {
      const uint32_t table = 1 + i % 3;
      std::string payload = fmt::format("t{} #{} {}", table, i, std::string(100, 'x'));
      auto p = (*log)->append(table, payload);
      REQUIRE(p.ok());
      written.push_back({table, *p, payload});
    }
    REQUIRE((*log)->close().ok());
  }
  REQUIRE(written.back().position.segment > written.front().position.segment + 1);

  ReplayOptions options;
  options.table_start[1] = written[150].position;  // table 1 persisted what came before #150
  options.table_start[2] = written[298].position;  // table 2 all but its last mutation (#298)
  const FilteredReplay seen = replay(dir.path(), options);
  std::vector<std::string> expected;
  for (const WrittenMutation& w : written) {
    auto start = options.table_start.find(w.table);
    if (start == options.table_start.end() || w.position >= start->second) expected.push_back(w.payload);
  }
  CHECK(seen.payloads == expected);
  CHECK(seen.report.filtered_mutations == written.size() - expected.size());
  CHECK(seen.report.mutations == expected.size());
}

TEST_CASE("replay: cutoff_time_us skips mutations written after it") {
  TempDir dir;
  uint64_t cutoff = 0;
  {
    Options options;
    options.directory = dir.path();
    auto log = CommitLog::open(options);
    REQUIRE(log.ok());
    for (int i = 0; i < 10; ++i) REQUIRE((*log)->append(1, fmt::format("before {}", i)).ok());
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    cutoff = now_us();
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    for (int i = 0; i < 5; ++i) REQUIRE((*log)->append(2, fmt::format("after {}", i)).ok());
    REQUIRE((*log)->close().ok());
  }
  ReplayOptions options;
  options.cutoff_time_us = cutoff;
  const FilteredReplay seen = replay(dir.path(), options);
  REQUIRE(seen.payloads.size() == 10);
  for (int i = 0; i < 10; ++i) CHECK(seen.payloads[i] == fmt::format("before {}", i));
  CHECK(seen.report.filtered_mutations == 5);
  CHECK(replay(dir.path(), ReplayOptions{}).payloads.size() == 15);
}

}  // namespace
}  // namespace commitlog
