// SPDX-License-Identifier: Apache-2.0
// The tools on an encrypted log, as an operator runs them: with --key-file
// each reads every mutation; without it `verify` checks the framing and says
// the contents were not checked, `stat` lists the key ids the log needs, and
// the others refuse; a wrong key is exit 2 and one line naming the segment
// and the key id, from every tool. Sealed entries and LZ4 sections alike.
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "commitlog/commit_log.h"
#include "tests/support/log_files.h"
#include "tests/support/run_cli.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_keys.h"

namespace commitlog {
namespace encrypted_tools_test {

using nlohmann::json;
using testing::run_cli;
using testing::TempDir;

constexpr int kAppends = 200;

// A log of kAppends mutations in `dir`, encrypted under master key 1 of `keys`.
void write_encrypted_log(const std::string& dir, const std::string& keys, Compression compression) {
  Options o = testing::batch_options(dir, 16 << 10, compression, Options{}.direct_write_threshold);
  o.encryption = testing::test_keys(keys, {1});
  auto log = testing::open_log(o);
  for (int i = 0; i < kAppends; ++i) {
    REQUIRE(log->append(static_cast<uint32_t>(i % 3), fmt::format("mutation {:04d} {}", i, std::string(60, 'y'))).ok());
  }
  REQUIRE(log->close().ok());
}

size_t count_lines(const std::string& text, const std::string& prefix = "") {
  size_t n = 0;
  for (size_t at = 0; at < text.size();) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    n += text.compare(at, prefix.size(), prefix) == 0 ? 1 : 0;
    at = end + 1;
  }
  return n;
}

TEST_CASE("encrypted tools: with the key every tool reads the log, without it or with a wrong key each says which") {
  for (Compression compression : {Compression::kNone, Compression::kLz4}) {
    const bool lz4 = compression == Compression::kLz4;
    CAPTURE(lz4);
    TempDir dir;
    const std::string log = dir.file("log"), keys = dir.file("keys"), wrong = dir.file("wrong");
    write_encrypted_log(log, keys, compression);
    testing::write_key_file(wrong, {1}, 2);  // the same id, another key
    const auto segments = testing::segment_files(log);
    REQUIRE(segments.size() > 1);
    const std::string first = std::to_string(segments.front().id);

    const auto replay = run_cli({"replay", log, "--key-file", keys});
    CHECK(replay.exit_code == 0);
    CHECK(count_lines(replay.out) == kAppends);
    const auto tail = run_cli({"tail", log, "--key-file", keys});
    CHECK(tail.exit_code == 0);
    CHECK(count_lines(tail.out) == kAppends);
    const auto verify = run_cli({"verify", log, "--key-file", keys});
    CHECK(verify.exit_code == 0);
    CHECK_MESSAGE(verify.out.find(fmt::format("{} mutations", kAppends)) != std::string::npos, verify.out);

    const auto dump = run_cli({"dump", log, "--format", "jsonl", "--key-file", keys});
    CHECK(dump.exit_code == 0);
    size_t entries = 0, storage_lines = 0;
    for (size_t at = 0; at < dump.out.size();) {
      const size_t end = dump.out.find('\n', at);
      const json r = json::parse(dump.out.substr(at, end - at));
      at = end + 1;
      entries += r["type"] == "entry" ? 1 : 0;
      if (r["type"] == (lz4 ? "compression" : "sealed_entries")) {
        ++storage_lines;
        CHECK(r["key_id"] == 1);
      }
    }
    CHECK(entries == kAppends);
    CHECK(storage_lines == segments.size());

    // Without the key: verify checks what it can and says so; stat lists
    // the key ids the log needs; replay refuses, naming segment and key id.
    const auto framing = run_cli({"verify", log});
    CHECK(framing.exit_code == 0);
    CHECK_MESSAGE(framing.out.find("contents not checked (no --key-file)") != std::string::npos, framing.out);
    // Sealed entries are counted by their framing; sealed sections cannot be.
    const std::string counted = lz4 ? "0 mutations," : fmt::format("0 mutations and {} sealed, not opened", kAppends);
    CHECK_MESSAGE(framing.out.find(counted) != std::string::npos, framing.out);
    const auto framing_json = run_cli({"verify", log, "--format", "json"});
    CHECK(json::parse(framing_json.out)["unopened_mutations"] == (lz4 ? 0 : kAppends));
    const auto stat = run_cli({"stat", log, "--format", "json"});
    CHECK(stat.exit_code == 0);
    CHECK(json::parse(stat.out)["key_ids_needed"] == json::parse(fmt::format(R"([{{"key_id":1,"segments":{}}}])",
                                                                             segments.size())));
    const json stat_json = json::parse(stat.out);
    for (const json& segment : stat_json["segments"]) {
      CHECK(segment["end"] == "encrypted");
      CHECK(segment["data_end"].is_null());
      CHECK(segment["contents_read"] == false);
    }
    for (const char* command : {"replay", "dump"}) {
      CAPTURE(command);
      const auto keyless = run_cli({command, log});
      CHECK(keyless.exit_code == 2);
      CHECK(keyless.out.empty());
      CHECK_MESSAGE(keyless.err.find("segment " + first + " is encrypted with master key 1") != std::string::npos,
                    keyless.err);
    }

    for (const char* command : {"replay", "verify", "dump", "stat", "tail"}) {
      CAPTURE(command);
      const auto refused = run_cli({command, log, "--key-file", wrong});
      CHECK(refused.exit_code == 2);
      CHECK(count_lines(refused.err) == 1);
      CHECK_MESSAGE(refused.err.find("segment " + first + ": master key 1") != std::string::npos, refused.err);
      CHECK(refused.err.find("wrong key") != std::string::npos);
      CHECK(refused.out.find("mutation 0000") == std::string::npos);
      if (std::string_view(command) == "dump") CHECK(refused.out.empty());
    }
  }
}

}  // namespace encrypted_tools_test
}  // namespace commitlog
