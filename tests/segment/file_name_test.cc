// SPDX-License-Identifier: Apache-2.0
// Segment file names: what is a segment's name, and a name that looks like
// one but cannot be read is an error naming the file, never ignored.
#include <doctest/doctest.h>

#include "commitlog/commit_log.h"
#include "commitlog/replayer.h"
#include "segment/file_name.h"
#include "tests/support/log_files.h"
#include "tests/support/temp_dir.h"

namespace commitlog {
namespace {

TEST_CASE("file names: a segment's name carries its id and reads back") {
  CHECK(segment_file_name(1712345678901) == "CommitLog-3-1712345678901.log");
  auto id = parse_segment_file_name(segment_file_name(UINT64_MAX));
  REQUIRE(id.ok());
  CHECK(*id == std::optional<uint64_t>(UINT64_MAX));
}

TEST_CASE("file names: other names are not segments") {
  for (const std::string name : {"snapshot-1.kv", "CommitLog-1-5.log.tmp", "commitlog-1-5.log", "CommitLog-",
                           "CommitLog-1-5_cdc.idx", ".log"}) {
    CAPTURE(name);
    auto id = parse_segment_file_name(name);
    REQUIRE(id.ok());
    CHECK_FALSE(id->has_value());
  }
}

TEST_CASE("file names: a segment-like name whose id does not parse is an error naming it") {
  for (const std::string name : {"CommitLog-1-18446744073709551616.log", "CommitLog-1-12x.log",
                           "CommitLog-1-.log", "CommitLog-1.log", "CommitLog-.log", "CommitLog--5.log",
                           "CommitLog-99999999999999999999-5.log", "CommitLog-1--5.log"}) {
    CAPTURE(name);
    auto id = parse_segment_file_name(name);
    REQUIRE_FALSE(id.ok());
    CHECK(id.status().code() == ErrorCode::kInvalidArgument);
    CHECK(id.status().message().find(name) != std::string::npos);
  }
}

TEST_CASE("file names: replay and open refuse a directory holding a segment-like name that does not parse") {
  testing::TempDir dir;
  const std::string bad = dir.file("CommitLog-1-18446744073709551616.log");
  testing::write_file(bad, std::vector<std::byte>(64));
  auto replayed = testing::replay_all(dir.path());
  CHECK(replayed.report.status.code() == ErrorCode::kInvalidArgument);
  CHECK(replayed.report.status.message().find(bad) != std::string::npos);
  Options options;
  options.directory = dir.path();
  auto log = CommitLog::open(options);
  REQUIRE_FALSE(log.ok());
  CHECK(log.status().message().find(bad) != std::string::npos);
}

}  // namespace
}  // namespace commitlog
