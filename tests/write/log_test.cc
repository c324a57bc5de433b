// SPDX-License-Identifier: Apache-2.0
// The commit log end to end on the real file system: append from threads and
// fibers, wait for durability, replay.
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <set>
#include <thread>
#include <vector>

#include <boost/fiber/all.hpp>
#include <fmt/core.h>

#include "commitlog/commit_log.h"
#include "segment/format.h"
#include "tests/support/durable_policies.h"
#include "tests/support/log_files.h"
#include "tests/support/temp_dir.h"
#include "tests/support/thread_names.h"

namespace commitlog {
namespace {

using testing::open_log;
using testing::replay_all;
using testing::segment_files;
using testing::TempDir;

Options small_log(const std::string& dir, const std::string& policy = "batch") {
  Options options;
  options.directory = dir;
  options.sync_policy = policy;
  options.segment_size = 64 << 10;
  options.policy.group_window = std::chrono::milliseconds(1);
  return options;
}

TEST_CASE("mutations appended from threads are all replayed, in order per producer, across segments") {
  TempDir dir;
  auto log = open_log(small_log(dir.path()));
  constexpr int kThreads = 4, kPerThread = 500;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int s = 0; s < kPerThread; ++s) {
        auto pos = log->append(static_cast<uint32_t>(t), fmt::format("t{} s{} {}", t, s, std::string(s % 97, 'x')));
        REQUIRE(pos.ok());
      }
    });
  }
  for (auto& t : threads) t.join();
  REQUIRE(log->close().ok());
  CHECK(log->stats().segment_switches > 0);

  auto replayed = replay_all(dir.path());
  REQUIRE(replayed.report.status.ok());
  CHECK(replayed.report.mutations == kThreads * kPerThread);
  CHECK(replayed.report.corruptions == 0);
  CHECK(std::is_sorted(replayed.positions.begin(), replayed.positions.end()));
  std::vector<int> next(kThreads, 0);
  for (size_t i = 0; i < replayed.payloads.size(); ++i) {
    const int t = static_cast<int>(replayed.tables[i]);
    CHECK(replayed.payloads[i] == fmt::format("t{} s{} {}", t, next[t], std::string(next[t] % 97, 'x')));
    ++next[t];
  }
}

TEST_CASE("4 threads x 1000 fibers wait for durability and every acknowledged mutation replays") {
  TempDir dir;
  for (const char* policy : testing::kDurablePolicies) {
    CAPTURE(policy);
    std::filesystem::remove_all(dir.path());
    auto log = open_log(small_log(dir.path(), policy));
    constexpr int kThreads = 4, kFibers = 1000, kEach = 3;
    std::atomic<int> acked{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        std::vector<boost::fibers::fiber> fibers;
        for (int f = 0; f < kFibers; ++f) {
          fibers.emplace_back([&, t, f] {
            for (int s = 0; s < kEach; ++s) {
              if (log->append(static_cast<uint32_t>(f), fmt::format("{}/{}/{}", t, f, s)).ok()) ++acked;
            }
          });
        }
        for (auto& fiber : fibers) fiber.join();
      });
    }
    for (auto& t : threads) t.join();
    const CommitLogStats stats = log->stats();
    REQUIRE(log->close().ok());
    CHECK(acked == kThreads * kFibers * kEach);
    // Group commit at work: far fewer flushes than mutations.
    CHECK(stats.flushes < static_cast<uint64_t>(acked.load()) / 4);
    auto replayed = replay_all(dir.path());
    REQUIRE(replayed.report.status.ok());
    CHECK(replayed.report.mutations == static_cast<uint64_t>(acked.load()));
    std::set<std::string> unique(replayed.payloads.begin(), replayed.payloads.end());
    CHECK(unique.size() == replayed.payloads.size());
  }
}

TEST_CASE("append_batch reserves once and keeps order") {
  TempDir dir;
  auto log = open_log(small_log(dir.path()));
  std::vector<std::string> texts;
  for (int i = 0; i < 300; ++i) texts.push_back(fmt::format("batch entry {} {}", i, std::string(i % 50, 'b')));
  std::vector<Mutation> batch;
  for (size_t i = 0; i < texts.size(); ++i) {
    batch.push_back({static_cast<uint32_t>(i % 7), std::as_bytes(std::span(texts[i].data(), texts[i].size()))});
  }
  auto range = log->append_batch(batch);
  REQUIRE(range.ok());
  CHECK(range->first < range->last);
  CHECK(log->wait_durable(range->last).ok());
  REQUIRE(log->close().ok());
  auto replayed = replay_all(dir.path());
  REQUIRE(replayed.report.status.ok());
  CHECK(replayed.payloads == texts);
  CHECK(replayed.positions.front() == range->first);
  CHECK(replayed.positions.back() == range->last);
}

TEST_CASE("an oversized mutation is refused with both sizes and nothing is written") {
  TempDir dir;
  Options options = small_log(dir.path());
  options.max_mutation_size = 1000;
  auto log = open_log(options);
  REQUIRE(log->append(1, std::string(1000, 'a')).ok());
  auto refused = log->append(1, std::string(1001, 'a'));
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().code() == ErrorCode::kInvalidArgument);
  CHECK(refused.status().message().find("1001") != std::string::npos);
  CHECK(refused.status().message().find("1000") != std::string::npos);
  std::string ok_text = "fine";
  std::string big(5000, 'z');
  std::vector<Mutation> batch{{1, std::as_bytes(std::span(ok_text.data(), ok_text.size()))},
                              {1, std::as_bytes(std::span(big.data(), big.size()))}};
  CHECK_FALSE(log->append_batch(batch).ok());
  REQUIRE(log->close().ok());
  auto replayed = replay_all(dir.path());
  CHECK(replayed.report.mutations == 1);
}

TEST_CASE("the default max_mutation_size is half the segment and a segment never splits a mutation") {
  TempDir dir;
  auto log = open_log(small_log(dir.path()));
  CHECK(log->options().effective_max_mutation_size() == 32 << 10);
  for (int i = 0; i < 10; ++i) REQUIRE(log->append(2, std::string(32 << 10, static_cast<char>('a' + i))).ok());
  CHECK_FALSE(log->append(2, std::string((32 << 10) + 1, 'x')).ok());
  REQUIRE(log->close().ok());
  auto replayed = replay_all(dir.path());
  REQUIRE(replayed.report.status.ok());
  REQUIRE(replayed.payloads.size() == 10);
  for (int i = 0; i < 10; ++i) CHECK(replayed.payloads[i] == std::string(32 << 10, static_cast<char>('a' + i)));
}

TEST_CASE("segment ids continue above the highest existing one after a restart and after deletion") {
  TempDir dir;
  uint64_t highest = 0;
  for (int run = 0; run < 3; ++run) {
    auto log = open_log(small_log(dir.path()));
    auto pos = log->append(1, std::string(30000, 'r'));
    REQUIRE(pos.ok());
    CHECK(pos->segment > highest);
    for (int i = 0; i < 2; ++i) REQUIRE(log->append(1, std::string(30000, 'r')).ok());  // a switch
    REQUIRE(log->close().ok());
    for (const auto& f : segment_files(dir.path())) {
      CHECK(std::filesystem::path(f.path).filename().string().starts_with("CommitLog-" + std::to_string(format::kFormatVersion) + "-"));
      highest = std::max(highest, f.id);
    }
  }
  for (const auto& f : segment_files(dir.path())) std::filesystem::remove(f.path);
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  auto log = open_log(small_log(dir.path()));
  auto pos = log->append(1, "after deletion");
  REQUIRE(pos.ok());
  CHECK(pos->segment > highest);
}

TEST_CASE("close leaves no unused preallocated segment and later appends fail") {
  TempDir dir;
  auto log = open_log(small_log(dir.path()));
  REQUIRE(log->append(1, "x").ok());
  REQUIRE(log->close().ok());
  CHECK(segment_files(dir.path()).size() == 1);
  auto late = log->append(1, "late");
  REQUIRE_FALSE(late.ok());
  CHECK(late.status().code() == ErrorCode::kClosed);
  CHECK(log->close().ok());
}

TEST_CASE("the log's threads carry names that ps, top and perf show") {
  TempDir plain_dir;
  auto plain = open_log(small_log(plain_dir.path()));
  const std::set<std::string> threads = {"cl-sync", "cl-segments", "cl-allocator"};
  const std::set<std::string> names = testing::thread_names(::getpid(), threads);
  for (const std::string& name : threads) CHECK_MESSAGE(names.count(name) == 1, name);
  CHECK(names.count("cl-commit") == 0);  // compressed logs only

  TempDir lz4_dir;
  Options lz4 = small_log(lz4_dir.path());
  lz4.compression = Compression::kLz4;
  auto compressed = open_log(lz4);
  CHECK(testing::thread_names(::getpid(), {"cl-commit"}).count("cl-commit") == 1);
}

TEST_CASE("sync() makes periodic appends durable at once") {
  TempDir dir;
  Options options = small_log(dir.path(), "periodic");
  options.policy.sync_period = std::chrono::hours(1);
  options.policy.lag_block = std::chrono::hours(2);
  auto log = open_log(options);
  REQUIRE(log->append(3, "periodic").ok());
  CHECK(log->stats().flushes == 0);
  REQUIRE(log->sync().ok());
  CHECK(log->stats().flushes >= 1);
  CHECK(log->stats().durable > Position{0, 0});
  // A copy taken now, before close, holds the mutation.
  TempDir copy;
  for (const auto& f : segment_files(dir.path())) {
    std::filesystem::copy(f.path, copy.path() + "/" + std::filesystem::path(f.path).filename().string());
  }
  auto replayed = replay_all(copy.path());
  REQUIRE(replayed.report.status.ok());
  CHECK(replayed.payloads == std::vector<std::string>{"periodic"});
}

TEST_CASE("bad options are refused at open") {
  TempDir dir;
  Options options = small_log(dir.path());
  options.sync_policy = "nonesuch";
  auto log = CommitLog::open(options);
  REQUIRE_FALSE(log.ok());
  CHECK(log.status().message().find("batch") != std::string::npos);
  options = small_log(dir.path());
  options.max_mutation_size = 64 << 10;
  CHECK_FALSE(CommitLog::open(options).ok());
  options = small_log(dir.path());
  options.segment_size = 100;
  CHECK_FALSE(CommitLog::open(options).ok());
}

}  // namespace
}  // namespace commitlog
