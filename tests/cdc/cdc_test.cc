// SPDX-License-Identifier: Apache-2.0
// Change data capture (commitlog/cdc/cdc_writer.h): segments that receive a CDC
// table's mutation are linked into cdc_raw with a _cdc.idx file whose offset
// never exceeds what the segment holds intact and which says COMPLETED once
// the segment is finished; discard leaves cdc_raw alone; cdc_total_space is
// kept by refusing CDC appends (cdc_block_writes: true) or by deleting the
// oldest files (false); and the tail reads cdc_raw through its idx files.
#include <doctest/doctest.h>

#include <map>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "commitlog/cdc/cdc_writer.h"
#include "commitlog/commit_log.h"
#include "commitlog/tail_reader.h"
#include "segment/segment_reader.h"
#include "tests/support/fault_file_system.h"

namespace commitlog {
namespace {

using testing::CrashMode;
using testing::FaultFileSystem;
using testing::kLogDir;

constexpr char kRaw[] = "/db/cdc_raw";

Options cdc_options(FaultFileSystem& fs) {
  Options o;
  o.directory = kLogDir;
  o.file_system = &fs;
  o.sync_policy = "batch";
  o.segment_size = 16 << 10;
  o.cdc.enabled = true;
  o.cdc.tables = {1};
  o.cdc.free_space_check_interval = std::chrono::milliseconds(1);
  return o;
}

std::string read_text(FileSystem& fs, const std::string& path) {
  auto bytes = read_whole_file(fs, path);
  REQUIRE_MESSAGE(bytes.ok(), bytes.status().to_string());
  return {reinterpret_cast<const char*>(bytes->data()), bytes->size()};
}

std::set<std::string> names(FileSystem& fs, const std::string& dir) {
  auto listed = fs.list(dir);
  REQUIRE(listed.ok());
  return {listed->begin(), listed->end()};
}

// The names in `dir` but the ".tmp" an idx is written to before it is
// renamed over the old one: while the log is open that file comes and goes
// with every flush.
std::set<std::string> names_but_temporary(FileSystem& fs, const std::string& dir) {
  std::set<std::string> out = names(fs, dir);
  std::erase_if(out, [](const std::string& name) { return name.ends_with(".tmp"); });
  return out;
}

// Where the sealed data of a segment file ends: what a replay finds intact.
uint64_t intact_end(FileSystem& fs, const std::string& path) {
  auto bytes = read_whole_file(fs, path);
  REQUIRE(bytes.ok());
  SegmentHeader header;
  REQUIRE(decode_segment_header(*bytes, &header) == HeaderProblem::kNone);
  const SegmentImage image = load_segment_image(*bytes, header);
  SegmentReader reader(image, header);
  while (true) {
    const SegmentItem item = reader.next();
    if (const auto* end = std::get_if<SegmentEnd>(&item)) return end->offset;
    REQUIRE(std::holds_alternative<SegmentEntry>(item));
  }
}

TEST_CASE("cdc: defaults, and cdc_raw beside the log directory") {
  CdcOptions cdc;
  CHECK_FALSE(cdc.enabled);
  CHECK(cdc.block_writes);
  CHECK(cdc_raw_directory_for(cdc, "/var/lib/commitlog") == "/var/lib/cdc_raw");
  CHECK(cdc_raw_directory_for(cdc, "/var/lib/commitlog/") == "/var/lib/cdc_raw");
  CHECK(cdc_raw_directory_for(cdc, "commitlog") == "cdc_raw");
  cdc.raw_directory = "/elsewhere";
  CHECK(cdc_raw_directory_for(cdc, "/var/lib/commitlog") == "/elsewhere");
  CHECK(cdc_index_name("CommitLog-1-42.log") == "CommitLog-1-42_cdc.idx");
  cdc.enabled = true;
  CHECK(cdc.captures(9));
  cdc.tables = {1, 3};
  CHECK(cdc.captures(3));
  CHECK_FALSE(cdc.captures(2));

  FaultFileSystem fs;
  fs.set_volume_bytes(uint64_t{8} << 30);
  Options o = cdc_options(fs);
  CdcWriter small(o);
  REQUIRE(small.start().ok());
  CHECK(small.total_space() == uint64_t{1} << 30);  // 1/8 of the volume
  fs.set_volume_bytes(uint64_t{1} << 40);
  CdcWriter big(o);
  REQUIRE(big.start().ok());
  CHECK(big.total_space() == uint64_t{4096} << 20);
}

TEST_CASE("cdc: segments with CDC mutations are linked, their idx follows the durable offset and says COMPLETED") {
  FaultFileSystem fs;
  Options o = cdc_options(fs);
  auto log = CommitLog::open(o);
  REQUIRE(log.ok());
  // A segment of table 2 alone, then segments holding table 1.
  uint64_t first_cdc = 0;
  for (int i = 0; i < 100; ++i) REQUIRE((*log)->append(2, std::string(300, 'x')).ok());
  for (int i = 0; i < 200; ++i) {
    auto p = (*log)->append(i % 2 == 0 ? 1 : 2, std::string(300, 'y'));
    REQUIRE(p.ok());
    if (first_cdc == 0 && i == 0) first_cdc = p->segment;
  }
  auto files = list_segment_files(fs, kLogDir);
  REQUIRE(files.ok());
  const uint64_t first_id = files->front().id;
  // While the log is open the idx of the active segment trails its durable
  // offset at most, and never exceeds what its bytes hold.
  (*log)->sync().ignore();
  REQUIRE((*log)->close().ok());
  const std::set<std::string> raw = names(fs, kRaw);
  CHECK(raw.count("CommitLog-1-" + std::to_string(first_id) + ".log") == 0);
  size_t linked = 0;
  for (const SegmentFile& f : *files) {
    const std::string name = f.path.substr(f.path.rfind('/') + 1);
    if (raw.count(name) == 0) continue;
    ++linked;
    CHECK(f.id >= first_cdc);
    const std::string index = read_text(fs, std::string(kRaw) + "/" + cdc_index_name(name));
    INFO(name << ": " << index);
    const uint64_t offset = std::stoull(index);
    CHECK(index.ends_with("\nCOMPLETED\n"));
    CHECK(offset <= intact_end(fs, std::string(kRaw) + "/" + name));
    CHECK(offset == intact_end(fs, f.path));
  }
  CHECK(linked >= 3);
  CHECK(raw.size() == 2 * linked);  // no temporary file left behind
  // A crash keeps the links and the idx files: they were synced.
  auto crashed = fs.crash(CrashMode::kDrop, 0);
  CHECK(names(*crashed, kRaw) == raw);
}

TEST_CASE("cdc: an idx offset never exceeds what the segment holds intact at a power loss") {
  FaultFileSystem fs;
  Options o = cdc_options(fs);
  o.cdc.tables = {};
  o.sync_policy = "periodic";
  o.policy.sync_period = std::chrono::milliseconds(1);
  o.policy.marker_interval = std::chrono::milliseconds(1);
  auto log = CommitLog::open(o);
  REQUIRE(log.ok());
  // A sync now and then links the segments so far whatever the machine's pace;
  // between them the 1 ms period keeps moving the idx files under the appends.
  for (int i = 0; i < 2000; ++i) {
    REQUIRE((*log)->append(1, std::string(100 + i % 200, 'z')).ok());
    if (i % 500 == 499) REQUIRE((*log)->sync().ok());
  }
  fs.pull_plug();
  (*log)->close().ignore();
  auto crashed = fs.crash(CrashMode::kTear, 7);
  size_t checked = 0;
  for (const std::string& name : names(*crashed, kRaw)) {
    if (!name.ends_with("_cdc.idx")) continue;
    const std::string segment = name.substr(0, name.size() - 8) + ".log";
    const uint64_t offset = std::stoull(read_text(*crashed, std::string(kRaw) + "/" + name));
    INFO(name);
    CHECK(offset <= intact_end(*crashed, std::string(kRaw) + "/" + segment));
    ++checked;
  }
  CHECK(checked > 0);
}

TEST_CASE("cdc: discard deletes segments from the log but never from cdc_raw") {
  FaultFileSystem fs;
  Options o = cdc_options(fs);
  auto log = CommitLog::open(o);
  REQUIRE(log.ok());
  Position last;
  for (int i = 0; i < 300; ++i) last = (*log)->append(1, std::string(300, 'd')).value();
  const size_t linked = names_but_temporary(fs, kRaw).size();
  REQUIRE((*log)->discard(1, last).ok());
  REQUIRE((*log)->close().ok());
  CHECK((*log)->metrics().segments_deleted > 0);
  CHECK(names_but_temporary(fs, kRaw).size() >= linked);
}

TEST_CASE("cdc: over cdc_total_space with cdc_block_writes, CDC appends fail and the other tables append") {
  FaultFileSystem fs;
  Options o = cdc_options(fs);
  o.cdc.total_space = 20 << 10;  // just over one 16 KiB segment
  auto log = CommitLog::open(o);
  REQUIRE(log.ok());
  Status refused;
  for (int i = 0; i < 100000 && refused.ok(); ++i) refused = (*log)->append(1, std::string(200, 'b')).status();
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.code() == ErrorCode::kNoSpace);
  CHECK(refused.message().find("cdc_total_space") != std::string::npos);
  CHECK(refused.message().find("table 1") != std::string::npos);
  CHECK((*log)->append(2, "not captured").ok());
  CHECK((*log)->metrics().cdc_appends_refused >= 1);
  // The consumer deletes what it read: CDC appends go on once that is measured.
  for (const std::string& name : names_but_temporary(fs, kRaw)) {
    REQUIRE(fs.remove(std::string(kRaw) + "/" + name).ok());
  }
  Status admitted = refused;
  for (int i = 0; i < 1000000 && !admitted.ok(); ++i) admitted = (*log)->append(1, "again").status();
  CHECK(admitted.ok());
  REQUIRE((*log)->close().ok());
}

TEST_CASE("cdc: over cdc_total_space without cdc_block_writes, the oldest files go and appends continue") {
  FaultFileSystem fs;
  Options o = cdc_options(fs);
  o.cdc.total_space = 40 << 10;
  o.cdc.block_writes = false;
  auto log = CommitLog::open(o);
  REQUIRE(log.ok());
  for (int i = 0; i < 3000; ++i) REQUIRE((*log)->append(1, std::string(200, 'n')).ok());
  while ((*log)->metrics().cdc_segments_deleted == 0) REQUIRE((*log)->append(1, "more").ok());
  REQUIRE((*log)->close().ok());
  const MetricsSnapshot m = (*log)->metrics();
  CHECK(m.cdc_segments_deleted > 0);
  CHECK(m.cdc_appends_refused == 0);
  // What is left is the newest segments, each with its idx.
  auto raw = list_segment_files(fs, kRaw);
  REQUIRE(raw.ok());
  auto all = list_segment_files(fs, kLogDir);
  REQUIRE(all.ok());
  REQUIRE_FALSE(raw->empty());
  CHECK(raw->back().id == all->back().id);
  CHECK(raw->front().id > all->front().id);
}

TEST_CASE("cdc: the tail follows cdc_raw through its idx files") {
  FaultFileSystem fs;
  Options o = cdc_options(fs);
  o.cdc.tables = {};
  auto log = CommitLog::open(o);
  REQUIRE(log.ok());
  TailOptions tail_options;
  tail_options.file_system = &fs;
  TailReader tail(kRaw, tail_options);
  std::vector<std::string> seen;
  auto collect = [&](const ReplayedMutation& m) {
    seen.emplace_back(reinterpret_cast<const char*>(m.payload.data()), m.payload.size());
    return Status{};
  };
  for (int i = 0; i < 500; ++i) {
    REQUIRE((*log)->append(1, "m" + std::to_string(i) + std::string(100, '.')).ok());
    REQUIRE(tail.poll(collect).ok());
  }
  REQUIRE((*log)->close().ok());
  // After close every idx says COMPLETED: the tail reads to the very end.
  while (true) {
    auto got = tail.poll(collect);
    REQUIRE(got.ok());
    if (*got == 0) break;
  }
  REQUIRE(seen.size() == 500);
  for (int i = 0; i < 500; ++i) CHECK(seen[static_cast<size_t>(i)].starts_with("m" + std::to_string(i) + "."));
}

}  // namespace
}  // namespace commitlog
