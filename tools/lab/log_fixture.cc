// SPDX-License-Identifier: Apache-2.0
#include "tools/lab/log_fixture.h"

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "commitlog/commit_log.h"
#include "segment/format.h"
#include "tools/common/commands.h"
#include "tools/common/size_option.h"

namespace commitlog::tools {
namespace {

struct FixtureArgs {
  std::string dir;
  uint64_t bytes = 1ull << 30;
  uint64_t payload = 1024;
  uint32_t tables = 16;
  uint64_t segment_size = 32ull << 20;
  std::string compression = "none";
};

// xorshift64: deterministic, fast, good enough for test data.
uint64_t next_random(uint64_t& state) {
  state ^= state << 13;
  state ^= state >> 7;
  state ^= state << 17;
  return state;
}

// A few MiB of space-separated words to cut payloads from.
std::string make_text() {
  static constexpr const char* kWords[] = {
      "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet",
      "kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo", "sierra", "tango",
      "uniform", "victor", "whiskey", "xray", "yankee", "zulu", "0", "1", "2", "3", "4", "5", "6",
      "7", "8", "9", "user", "order", "item", "price", "status", "created", "updated", "name"};
  constexpr size_t kWordCount = sizeof kWords / sizeof kWords[0];
  std::string text;
  text.reserve(4u << 20);
  uint64_t state = 0x9e3779b97f4a7c15ULL;
  while (text.size() < (4u << 20)) {
    text += kWords[next_random(state) % kWordCount];
    text += ' ';
  }
  return text;
}

int run_fixture(const FixtureArgs& args) {
  std::error_code ec;
  if (std::filesystem::exists(args.dir, ec) && !std::filesystem::is_empty(args.dir, ec)) {
    fmt::print(stderr, "commitlog replay-fixture: {}: not empty; give a new directory\n", args.dir);
    return kExitUsage;
  }
  Options options;
  options.directory = args.dir;
  options.sync_policy = "periodic";
  options.segment_size = args.segment_size;
  options.compression = args.compression == "lz4" ? Compression::kLz4 : Compression::kNone;
  auto log = CommitLog::open(options);
  if (!log.ok()) {
    fmt::print(stderr, "commitlog replay-fixture: {}\n", log.status().to_string());
    return kExitUsage;
  }
  const std::string text = make_text();
  const uint64_t payload = std::min<uint64_t>(args.payload, text.size() / 2);
  const uint64_t footprint = format::entry_footprint(payload);
  constexpr size_t kBatch = 64;
  std::vector<Mutation> batch(kBatch);
  uint64_t state = 42, written = 0, mutations = 0;
  const auto start = std::chrono::steady_clock::now();
  while (written < args.bytes) {
    for (Mutation& m : batch) {
      const uint64_t at = next_random(state) % (text.size() - payload);
      m.table = static_cast<uint32_t>(next_random(state) % args.tables);
      m.payload = std::as_bytes(std::span(text.data() + at, payload));
    }
    auto appended = (*log)->append_batch(batch);
    if (!appended.ok()) {
      fmt::print(stderr, "commitlog replay-fixture: {}\n", appended.status().to_string());
      return kExitUsage;
    }
    written += footprint * kBatch;
    mutations += kBatch;
  }
  Status closed = (*log)->close();
  if (!closed.ok()) {
    fmt::print(stderr, "commitlog replay-fixture: {}\n", closed.to_string());
    return kExitUsage;
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  fmt::print("wrote {} mutations of {} bytes ({} bytes of entries) to {} in {:.2f} s\n", mutations,
             payload, written, args.dir, seconds);
  return kExitOk;
}

}  // namespace

void add_replay_fixture_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<FixtureArgs>();
  CLI::App* cmd = app.add_subcommand("replay-fixture", "write a log of a given size for replay benchmarks");
  cmd->group("");  // hidden: a benchmark aid, documented in docs/tools.md
  cmd->add_option("DIR", args->dir, "new log directory")->required();
  add_size_option(cmd, "--bytes", &args->bytes, "bytes of entries to write");
  add_size_option(cmd, "--payload", &args->payload, "payload bytes per mutation", 1, uint64_t{1} << 20);
  cmd->add_option("--tables", args->tables, "mutations go round these many tables")
      ->check(CLI::Range(1u, 1u << 20))
      ->capture_default_str();
  add_size_option(cmd, "--segment-size", &args->segment_size, "commitlog_segment_size");
  cmd->add_option("--compression", args->compression, "none or lz4")
      ->check(CLI::IsMember({"none", "lz4"}))
      ->capture_default_str();
  cmd->callback([args, &exit_code] { exit_code = run_fixture(*args); });
}

}  // namespace commitlog::tools
