// SPDX-License-Identifier: Apache-2.0
// Segment lifecycle on the real file system: discard marks tables clean, clean
// segments are deleted (never the newest), segments from an earlier process
// are read once and deleted the same way, and the log asks for flushes over
// commitlog_total_space. close() runs the lifecycle's last pass, so the files
// left after it are settled.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "commitlog/commit_log.h"
#include "segment/format.h"
#include "segment/file_name.h"
#include "tests/support/eventually.h"
#include "tests/support/log_files.h"
#include "tests/support/manual_clock.h"
#include "tests/support/segment_bytes.h"
#include "tests/support/temp_dir.h"

namespace commitlog {
namespace {

using testing::eventually;
using testing::open_log;

using testing::replay_all;
using testing::segment_files;
using testing::TempDir;

constexpr uint64_t kSegmentSize = 64 << 10;
const std::string kPayload(1000, 'p');  // about 60 entries per segment

Options periodic_log(const std::string& dir) {
  Options options;
  options.directory = dir;
  options.sync_policy = "periodic";
  options.segment_size = kSegmentSize;
  return options;
}

Position append(CommitLog& log, uint32_t table) {
  auto position = log.append(table, kPayload);
  REQUIRE_MESSAGE(position.ok(), position.status().to_string());
  return *position;
}

// Appends to `table` until an entry lands in segment `id`; returns the last position.
Position append_until_segment(CommitLog& log, uint32_t table, uint64_t id) {
  Position last;
  do {
    last = append(log, table);
  } while (last.segment < id);
  return last;
}

}  // namespace
}  // namespace commitlog

namespace doctest {
template <>
struct StringMaker<std::vector<uint64_t>> {
  static String convert(const std::vector<uint64_t>& v) {
    std::string out = "{";
    for (uint64_t x : v) out += " " + std::to_string(x);
    return (out + " }").c_str();
  }
};
}  // namespace doctest

namespace commitlog {
namespace {

std::vector<uint64_t> ids(const std::string& dir) {
  std::vector<uint64_t> out;
  for (const SegmentFile& f : segment_files(dir)) out.push_back(f.id);
  return out;
}

// Polls `done` for up to 60 s (the lifecycle thread acts asynchronously; a
// sanitizer build on a loaded machine can be very slow, and no speed is asserted).
TEST_CASE("lifecycle: discard deletes a fully clean segment and keeps a partially dirty one") {
  TempDir dir;
  auto log = open_log(periodic_log(dir.path()));
  const uint64_t first = append(*log, 1).segment;
  append_until_segment(*log, 1, first + 1);          // segment first: table 1 only
  const Position table2 = append(*log, 2);           // segment first + 1: tables 1 and 2
  const Position last1 = append_until_segment(*log, 1, first + 2);
  REQUIRE(table2.segment == first + 1);
  REQUIRE(log->sync().ok());

  SUBCASE("a discard short of a segment's last entry keeps it") {
    REQUIRE(log->discard(1, Position{first, format::kFirstEntryOffset}).ok());
    REQUIRE(log->close().ok());
    CHECK(ids(dir.path()) == std::vector<uint64_t>{first, first + 1, first + 2});
  }
  SUBCASE("table 1 discarded: the segment holding table 2 stays") {
    REQUIRE(log->discard(1, last1).ok());
    REQUIRE(log->close().ok());
    CHECK(ids(dir.path()) == std::vector<uint64_t>{first + 1, first + 2});
    CHECK(log->metrics().segments_deleted == 1);
    auto replayed = replay_all(dir.path());
    REQUIRE(replayed.report.status.ok());
    CHECK(std::count(replayed.tables.begin(), replayed.tables.end(), 2u) == 1);
  }
  SUBCASE("both discarded: only the newest segment stays") {
    REQUIRE(log->discard(2, table2).ok());
    REQUIRE(log->discard(1, last1).ok());
    REQUIRE(log->close().ok());
    CHECK(ids(dir.path()) == std::vector<uint64_t>{first + 2});
  }
  SUBCASE("a discard of another table changes nothing") {
    REQUIRE(log->discard(7, last1).ok());
    REQUIRE(log->close().ok());
    CHECK(ids(dir.path()).size() == 3);
  }
}

TEST_CASE("lifecycle: discard and wait_durable refuse a position never appended, discard a closed log") {
  TempDir dir;
  Options options = periodic_log(dir.path());
  testing::ManualClock clock;  // no periodic seal: nothing but appends moves the end
  options.clock = &clock;
  auto log = open_log(options);
  const Position p = append(*log, 1);
  // A later segment, an offset the active segment has not reached (a discard
  // there would cover the appends still to come, a wait would never end),
  // and an offset no segment can hold.
  for (const Position never : {Position{p.segment + 5, 0}, Position{p.segment, p.offset + 100'000},
                               Position{p.segment, uint64_t{1} << 40}}) {
    CAPTURE(never.to_string());
    CHECK(log->discard(1, never).code() == ErrorCode::kInvalidArgument);
    CHECK(log->wait_durable(never).code() == ErrorCode::kInvalidArgument);
  }
  REQUIRE(log->discard(1, p).ok());
  REQUIRE(log->wait_durable(p).ok());
  // Where the next append goes: a wait for everything before it is fine, a
  // discard up to it would cover that next mutation.
  const Position q = append(*log, 1);
  REQUIRE(q.segment == p.segment);
  const Position next{q.segment, q.offset + format::entry_footprint(kPayload.size())};
  CHECK(log->discard(1, next).code() == ErrorCode::kInvalidArgument);
  CHECK(log->wait_durable(next).ok());
  REQUIRE(log->close().ok());
  CHECK(log->discard(1, p).code() == ErrorCode::kClosed);
}

TEST_CASE("lifecycle: segments are deleted while the log runs, and ids keep increasing") {
  TempDir dir;
  uint64_t highest = 0;
  for (int run = 0; run < 3; ++run) {
    CAPTURE(run);
    auto log = open_log(periodic_log(dir.path()));
    const uint64_t first = append(*log, 1).segment;
    CHECK(first > highest);
    const Position last = append_until_segment(*log, 1, first + 3);
    REQUIRE(log->sync().ok());
    REQUIRE(log->discard(1, last).ok());
    // Everything but the active segment goes, old segments of earlier runs included.
    CHECK(eventually([&] { return ids(dir.path()).front() == first + 3; }));
    const Position later = append_until_segment(*log, 1, first + 4);
    CHECK(later.segment == first + 4);  // ids go on after deletions
    REQUIRE(log->discard(1, later).ok());
    REQUIRE(log->close().ok());
    const std::vector<uint64_t> left = ids(dir.path());
    CHECK(left == std::vector<uint64_t>{first + 4});  // the newest is never deleted
    highest = left.back();
  }
}

TEST_CASE("lifecycle: segments of an earlier process are deleted once discarded, a damaged one is kept") {
  TempDir dir;
  uint64_t first = 0;
  {
    // Segments: first (table 1), +1 (table 1), +2 (tables 1, 2, 3), +3 (table 3).
    auto log = open_log(periodic_log(dir.path()));
    first = append(*log, 1).segment;
    append_until_segment(*log, 1, first + 2);
    REQUIRE(append(*log, 2).segment == first + 2);
    append_until_segment(*log, 3, first + 3);
    REQUIRE(log->close().ok());
  }
  // Corrupt one entry's payload in segment first + 1.
  testing::flip_bit(dir.path() + "/" + segment_file_name(first + 1), format::kFirstEntryOffset + 40);

  auto log = open_log(periodic_log(dir.path()));
  const Position now = append(*log, 1);
  REQUIRE(now.segment > first + 3);
  SUBCASE("tables 1 and 3 discarded: the segment holding table 2 stays") {
    REQUIRE(log->discard(1, now).ok());
    REQUIRE(log->discard(3, now).ok());
    REQUIRE(log->close().ok());
    CHECK(ids(dir.path()) == std::vector<uint64_t>{first + 1, first + 2, now.segment});
  }
  SUBCASE("every table discarded: the damaged segment alone stays") {
    for (uint32_t table : {1u, 2u, 3u}) REQUIRE(log->discard(table, now).ok());
    REQUIRE(log->close().ok());
    CHECK(ids(dir.path()) == std::vector<uint64_t>{first + 1, now.segment});
  }
  SUBCASE("nothing discarded: every old segment stays") {
    REQUIRE(log->close().ok());
    CHECK(ids(dir.path()).size() == 5);
  }
}

TEST_CASE("lifecycle: a crashed run's last segment with a torn tail is sealed at open and deleted once discarded") {
  TempDir dir;
  testing::SegmentBuilder b(1000, 4096);
  b.section({"a", "b"});
  b.section({"c"});
  std::vector<std::byte> bytes = b.plain();
  // A flush torn by the crash: its marker half written, its entries' bytes after it.
  testing::fill(bytes, b.open_marker(), 200, std::byte{0x77});
  testing::write_file(dir.path() + "/" + segment_file_name(1000), bytes);
  auto log = open_log(periodic_log(dir.path()));
  const Position now = append(*log, 7);  // the builder's table
  REQUIRE(log->discard(7, now).ok());
  REQUIRE(log->close().ok());
  CHECK(ids(dir.path()) == std::vector<uint64_t>{now.segment});
}

TEST_CASE("lifecycle: over commitlog_total_space the log asks to flush the tables of the oldest segments") {
  TempDir dir;
  Options options = periodic_log(dir.path());
  // Two finished segments and the active one make 3 x 64 KiB: over 150 KiB by
  // less than the oldest segment, which holds table 1 only.
  options.total_space = 150 << 10;
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::vector<uint32_t>> requests;
  CommitLog* log_ptr = nullptr;
  Position last1;
  Status close_from_callback;
  options.on_flush_request = [&](std::vector<uint32_t> tables) {
    std::lock_guard lock(mu);
    // close() here would wait for this very thread: refused, the log goes on.
    if (requests.empty()) close_from_callback = log_ptr->close();
    requests.push_back(tables);
    // The embedder flushes table 1 and discards it.
    if (std::find(tables.begin(), tables.end(), 1u) != tables.end()) log_ptr->discard(1, last1).ignore();
    cv.notify_all();
  };
  auto log = open_log(options);
  log_ptr = log.get();
  const uint64_t first = append(*log, 1).segment;
  {
    std::lock_guard lock(mu);
    last1 = append_until_segment(*log, 1, first + 1);
  }
  append_until_segment(*log, 2, first + 2);
  append(*log, 3);
  {
    std::unique_lock lock(mu);
    REQUIRE(cv.wait_for(lock, std::chrono::seconds(60), [&] { return !requests.empty(); }));
    CHECK(requests.front() == std::vector<uint32_t>{1});
    CHECK(close_from_callback.code() == ErrorCode::kInvalidArgument);
    CHECK(close_from_callback.message().find("own thread") != std::string::npos);
  }
  // Segment first + 1 holds table 2 as well, so only the oldest goes.
  CHECK(eventually([&] { return ids(dir.path()).front() == first + 1; }));
  CHECK(log->metrics().flush_requests >= 1);
  REQUIRE(log->close().ok());
}

}  // namespace
}  // namespace commitlog
