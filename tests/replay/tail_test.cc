// SPDX-License-Identifier: Apache-2.0
// The live tail (commitlog/tail_reader.h) beside a writer on the fault file
// system: every mutation it hands out is durable at that moment (a crash
// image that keeps only synced bytes holds it), the writer loses power and
// restarts several times over 100+ segment switches, the tail is stopped and
// resumed from its position now and then, and at the end what it handed out
// is exactly the final log's replay, in order, with every acknowledged
// mutation in it. Plain and LZ4, for every durable policy and periodic, and
// in the standard and direct access modes.
#include <doctest/doctest.h>

#include <array>
#include <atomic>
#include <cstdlib>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "commitlog/commit_log.h"
#include "commitlog/replayer.h"
#include "commitlog/tail_reader.h"
#include "segment/checksum.h"
#include "segment/file_name.h"
#include "tests/support/fault_file_system.h"
#include "tests/support/segment_bytes.h"

namespace commitlog {
namespace {

using testing::CrashMode;
using testing::FaultFileSystem;
using testing::kLogDir;

struct Seen {
  Position position;
  uint32_t table = 0;
  std::string payload;
  bool operator==(const Seen&) const = default;
};

std::string text(std::span<const std::byte> bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

// A tail of the log directory in `fs`, from `from`.
TailReader tail_of(FaultFileSystem& fs, Position from = {}) {
  TailOptions options;
  options.file_system = &fs;
  options.from = from;
  return TailReader(kLogDir, options);
}

// Polls `tail` once; each payload handed out goes to `got`, as text.
Result<uint64_t> poll_texts(TailReader& tail, std::vector<std::string>& got) {
  return tail.poll([&](const ReplayedMutation& m) {
    got.push_back(text(m.payload));
    return Status{};
  });
}

Options log_options(FaultFileSystem& fs, const std::string& policy, bool lz4, DiskAccessMode mode) {
  Options o;
  o.disk_access_mode = mode;
  o.directory = kLogDir;
  o.file_system = &fs;
  o.sync_policy = policy;
  o.segment_size = 16 << 10;
  o.policy.sync_period = std::chrono::milliseconds(2);
  o.policy.marker_interval = std::chrono::milliseconds(1);
  // The one producer waits out a window per append, 24,000 times a test case.
  o.policy.group_window = std::chrono::microseconds(100);
  o.compression = lz4 ? Compression::kLz4 : Compression::kNone;
  return o;
}

std::vector<Seen> replay_all(FaultFileSystem& fs, std::set<uint64_t> only = {}) {
  std::vector<Seen> out;
  ReplayOptions options;
  options.file_system = &fs;
  // Checking durability: every intact entry counts, wherever it lies.
  if (!only.empty()) options.mode = RecoveryMode::kSkip;
  auto files = list_segment_files(fs, kLogDir);
  REQUIRE(files.ok());
  std::vector<SegmentFile> chosen;
  for (const SegmentFile& f : *files) {
    if (only.empty() || only.count(f.id) != 0) chosen.push_back(f);
  }
  replay_segment_files(chosen, options, [&](const ReplayedMutation& m) {
    out.push_back({m.position, m.table, text(m.payload)});
    return Status{};
  });
  return out;
}

// Everything `tail` hands out now, each one checked against what a crash at
// this moment would keep.
uint64_t drain(TailReader& tail, FaultFileSystem& fs, std::vector<Seen>& seen) {
  std::vector<Seen> batch;
  uint64_t total = 0;
  while (true) {
    auto got = tail.poll([&](const ReplayedMutation& m) {
      batch.push_back({m.position, m.table, text(m.payload)});
      return Status{};
    });
    REQUIRE_MESSAGE(got.ok(), got.status().to_string());
    if (*got == 0) break;
    total += *got;
  }
  if (batch.empty()) return 0;
  std::set<uint64_t> segments;
  for (const Seen& s : batch) segments.insert(s.position.segment);
  auto durable = fs.crash(CrashMode::kDrop, 0);
  const std::vector<Seen> kept = replay_all(*durable, segments);
  std::set<uint64_t> kept_at;
  for (const Seen& k : kept) kept_at.insert(k.position.segment * (1ull << 32) + k.position.offset);
  for (const Seen& s : batch) {
    INFO("handed out " << s.position.to_string());
    CHECK(kept_at.count(s.position.segment * (1ull << 32) + s.position.offset) == 1);
  }
  seen.insert(seen.end(), batch.begin(), batch.end());
  return total;
}

void run(const std::string& policy, bool lz4, DiskAccessMode mode, uint64_t seed) {
  CAPTURE(policy);
  CAPTURE(static_cast<int>(mode));
  CAPTURE(lz4);
  CAPTURE(seed);
  std::mt19937_64 rng(seed);
  auto fs = std::make_unique<FaultFileSystem>();
  std::vector<Seen> seen;
  std::vector<std::string> acked;
  TailOptions tail_options;
  tail_options.file_system = fs.get();
  auto tail = std::make_unique<TailReader>(kLogDir, tail_options);
  uint64_t switches = 0;
  constexpr int kRuns = 4;
  for (int run = 0; run < kRuns; ++run) {
    auto log = CommitLog::open(log_options(*fs, policy, lz4, mode));
    REQUIRE_MESSAGE(log.ok(), log.status().to_string());
    std::atomic<bool> stop{false};
    std::atomic<int> done{0};
    std::vector<std::string> run_acked;
    const bool last = run + 1 == kRuns;
    const int appends = 3000;
    // The power fails after a random share of the run's appends.
    const int cut = last ? appends : appends / 2 + static_cast<int>(rng() % (appends / 2));
    std::thread producer;
    // A failed REQUIRE leaves through here too: it is reported, not a
    // std::terminate from a joinable thread.
    struct StopProducer {
      std::atomic<bool>& stop;
      std::thread& thread;
      ~StopProducer() {
        stop.store(true);
        if (thread.joinable()) thread.join();
      }
    } stop_producer{stop, producer};
    producer = std::thread([&, run] {
      std::mt19937_64 r(seed + static_cast<uint64_t>(run));
      for (int i = 0; i < appends && !stop.load(); ++i) {
        const std::string payload = std::to_string(run) + ":" + std::to_string(i) + ":" +
                                    std::string(static_cast<size_t>(r() % 400), static_cast<char>('a' + i % 26));
        auto p = (*log)->append(static_cast<uint32_t>(r() % 3), payload);
        if (!p.ok()) break;
        run_acked.push_back(payload);
        done.store(i + 1);
        done.notify_one();
      }
      done.store(appends);
      done.notify_one();
    });
    for (int polled_at = 0; done.load() < cut;) {
      if (const int now = done.load(); now < polled_at + 50) {
        done.wait(now);
        continue;
      }
      polled_at = done.load();
      drain(*tail, *fs, seen);
      if (rng() % 8 == 0) {  // stopped and resumed from its position
        tail_options.from = tail->position();
        tail = std::make_unique<TailReader>(kLogDir, tail_options);
      }
    }
    // Power loss while the producer may still append.
    if (!last) fs->pull_plug();
    stop.store(true);
    producer.join();
    switches += (*log)->stats().segment_switches;
    (*log)->close().ignore();
    (*log).reset();  // before the file system it used is replaced
    if (last || policy != "periodic") acked.insert(acked.end(), run_acked.begin(), run_acked.end());
    if (!last) {
      fs = fs->crash(rng() % 2 == 0 ? CrashMode::kTear : CrashMode::kRandom, rng());
      tail_options.file_system = fs.get();
      tail_options.from = tail->position();
      tail = std::make_unique<TailReader>(kLogDir, tail_options);
    }
  }
  // A last run that writes nothing ends the previous one: its last section is
  // then known to be final.
  REQUIRE(CommitLog::open(log_options(*fs, policy, lz4, mode)).ok());
  drain(*tail, *fs, seen);
  CHECK(switches >= 100);
  const std::vector<Seen> replayed = replay_all(*fs);
  REQUIRE(seen.size() == replayed.size());
  CHECK(seen == replayed);
  std::set<std::string> out;
  for (const Seen& s : seen) out.insert(s.payload);
  size_t missing = 0;
  for (const std::string& a : acked) missing += out.count(a) == 0 ? 1 : 0;
  CHECK(missing == 0);
}

// The first run's seed is COMMITLOG_SEED's, to repeat a failure.
uint64_t first_seed() {
  const char* fixed = std::getenv("COMMITLOG_SEED");
  return fixed != nullptr && *fixed != '\0' ? std::strtoull(fixed, nullptr, 0) : std::random_device{}();
}

// `policy` in the default access mode, plain and LZ4.
void legacy_runs(const std::string& policy) {
  uint64_t seed = first_seed();
  for (bool lz4 : {false, true}) run(policy, lz4, DiskAccessMode::kLegacy, seed++);
}

TEST_CASE(
    "tail, power loss and restart: it hands out the final replay, durable when handed out: batch") {
  legacy_runs("batch");
}

TEST_CASE(
    "tail, power loss and restart: it hands out the final replay, durable when handed out: group") {
  legacy_runs("group");
}

TEST_CASE(
    "tail, power loss and restart: it hands out the final replay, durable when handed out: adaptive") {
  legacy_runs("adaptive");
}

TEST_CASE(
    "tail, power loss and restart: it hands out the final replay, durable when handed out: periodic") {
  legacy_runs("periodic");
}

TEST_CASE(
    "tail, power loss and restart: it hands out the final replay, durable when handed out: standard, direct") {
  uint64_t seed = first_seed();
  for (DiskAccessMode mode : {DiskAccessMode::kStandard, DiskAccessMode::kDirect}) {
    for (bool lz4 : {false, true}) run("batch", lz4, mode, seed++);
  }
}

TEST_CASE("tail: a read that raced the writer's flush is read again before what it found is handed out") {
  // The file as a read finds it in the middle of a direct flush, whose whole
  // blocks land before its last one: the new section's marker is there (and
  // proves the section before it), the second half of its first entry is not.
  // Once a later marker proves that section, the tail must hand it out as the
  // file holds it now, not as that read copied it.
  testing::SegmentBuilder b(1000, 4096);
  b.section({"a", "b"});
  const uint64_t second = b.section({std::string(200, 'c'), "d"});
  b.section({"e"});
  const std::vector<std::byte> whole = b.plain();
  std::vector<std::byte> racing = whole;
  const uint64_t torn_at = b.entries()[2] + 100;  // inside the first entry of `second`
  testing::fill(racing, torn_at, racing.size() - torn_at);
  REQUIRE(second < torn_at);

  FaultFileSystem fs;
  REQUIRE(fs.create_dirs(kLogDir).ok());
  auto file = fs.open(std::string(kLogDir) + "/" + segment_file_name(1000), OpenMode::kCreateNew);
  REQUIRE(file.ok());
  REQUIRE((*file)->write_at(0, racing).ok());
  TailReader tail = tail_of(fs);
  std::vector<std::string> got;
  auto polled = poll_texts(tail, got);
  REQUIRE_MESSAGE(polled.ok(), polled.status().to_string());
  CHECK(got == std::vector<std::string>{"a", "b"});

  REQUIRE((*file)->write_at(torn_at, std::span(whole).subspan(torn_at)).ok());
  polled = poll_texts(tail, got);
  REQUIRE_MESSAGE(polled.ok(), polled.status().to_string());
  CHECK(got == std::vector<std::string>{"a", "b", std::string(200, 'c'), "d"});
}

TEST_CASE("tail: a run killed while it made a segment ends at the next run, past that segment") {
  // Segment 1000's last section is proven by nothing in it; 1001's header
  // was never written (the writer was killed making it); 2000 begins a new
  // run. So 1000 is read to its end, as a replay reads it.
  testing::SegmentBuilder killed(1000, 4096);
  killed.section({"a"});
  killed.section({"b"});
  testing::SegmentBuilder next_run(2000, 4096);
  next_run.section({"x"});
  next_run.section({"y"});
  FaultFileSystem fs;
  REQUIRE(fs.create_dirs(kLogDir).ok());
  const std::vector<std::pair<uint64_t, std::vector<std::byte>>> files = {
      {1000, killed.plain()}, {1001, std::vector<std::byte>(4096)}, {2000, next_run.plain()}};
  for (const auto& [id, bytes] : files) {
    auto file = fs.open(std::string(kLogDir) + "/" + segment_file_name(id), OpenMode::kCreateNew);
    REQUIRE(file.ok());
    REQUIRE((*file)->write_at(0, bytes).ok());
  }
  TailReader tail = tail_of(fs);
  std::vector<std::string> got;
  auto polled = poll_texts(tail, got);
  REQUIRE_MESSAGE(polled.ok(), polled.status().to_string());
  CHECK(got == std::vector<std::string>{"a", "b", "x"});
  CHECK(tail.position().segment == 2000);
}

// Rewrites the header's capacity and its checksum, as a writer would have.
void set_capacity(FileSystem& fs, const std::string& path, uint64_t capacity) {
  auto file = fs.open(path, OpenMode::kReadWrite);
  REQUIRE(file.ok());
  std::array<std::byte, format::kHeaderSize> h{};
  REQUIRE((*file)->read_at(0, h).ok());
  store_u64(h.data() + format::kHeaderCapacityOffset, capacity);
  const uint16_t version = load_u16(h.data() + format::kHeaderVersionOffset);
  store_u64(h.data() + format::kHeaderChecksumOffset,
            checksum({h.data(), format::header_checksummed_bytes(version)}));
  REQUIRE((*file)->write_at(0, h).ok());
}

TEST_CASE("tail: a header whose capacity no writer makes is damage named with its file and offset") {
  for (bool lz4 : {false, true}) {
    for (uint64_t capacity : {uint64_t{0}, uint64_t{16}, uint64_t{1} << 40}) {
      CAPTURE(lz4);
      CAPTURE(capacity);
      FaultFileSystem fs;
      {
        auto log = CommitLog::open(log_options(fs, "batch", lz4, DiskAccessMode::kLegacy));
        REQUIRE_MESSAGE(log.ok(), log.status().to_string());
        for (int i = 0; i < 20; ++i) REQUIRE((*log)->append(1, std::string(100, 'a')).ok());
        REQUIRE((*log)->close().ok());
      }
      auto files = list_segment_files(fs, kLogDir);
      REQUIRE(files.ok());
      REQUIRE(!files->empty());
      set_capacity(fs, files->front().path, capacity);
      TailReader tail = tail_of(fs);
      std::vector<std::string> got;
      auto polled = poll_texts(tail, got);
      REQUIRE(!polled.ok());
      CHECK(polled.status().code() == ErrorCode::kCorruption);
      CHECK(polled.status().message().find(files->front().path + ": segment header at offset 32: capacity " +
                                           std::to_string(capacity)) != std::string::npos);
    }
  }
}

TEST_CASE("tail: a plain segment is read as far as its file goes, up to any capacity a writer makes") {
  // Without synced markers the file bounds what is read, and a file short of
  // its capacity ends truncated; a capacity no writer makes is refused.
  testing::SegmentBuilder b(1000, 4096, 0);
  b.section({"a"});
  b.close();
  FaultFileSystem fs;
  REQUIRE(fs.create_dirs(kLogDir).ok());
  const std::string path = std::string(kLogDir) + "/" + segment_file_name(1000);
  auto file = fs.open(path, OpenMode::kCreateNew);
  REQUIRE(file.ok());
  REQUIRE((*file)->write_at(0, b.plain()).ok());
  set_capacity(fs, path, uint64_t{1} << 32);
  {
    TailReader refused = tail_of(fs);
    std::vector<std::string> none;
    auto polled = poll_texts(refused, none);
    REQUIRE(!polled.ok());
    CHECK(polled.status().message().find(path + ": segment header at offset 32: capacity 4294967296 is 4 GiB or more") !=
          std::string::npos);
    CHECK(none.empty());
  }
  set_capacity(fs, path, (uint64_t{1} << 32) - 8);
  testing::SegmentBuilder next(1001, 4096, 0, 1000);
  next.section({"b"});
  auto later = fs.open(std::string(kLogDir) + "/" + segment_file_name(1001), OpenMode::kCreateNew);
  REQUIRE(later.ok());
  REQUIRE((*later)->write_at(0, next.plain()).ok());
  TailReader tail = tail_of(fs);
  std::vector<std::string> got;
  auto polled = poll_texts(tail, got);
  REQUIRE(!polled.ok());
  CHECK(polled.status().message().find(path + ": file truncated at offset 4096") != std::string::npos);
  CHECK(got == std::vector<std::string>{"a"});
}

TEST_CASE("tail: a moved-from reader refuses to poll") {
  FaultFileSystem fs;
  TailReader moved = tail_of(fs);
  TailReader tail = std::move(moved);
  std::vector<std::string> got;
  CHECK(poll_texts(moved, got).status().code() == ErrorCode::kInvalidArgument);  // NOLINT(bugprone-use-after-move)
  CHECK(poll_texts(tail, got).ok());
}

TEST_CASE("tail: a position past the end of a finished segment's data is refused naming it") {
  testing::SegmentBuilder finished(1000, 4096);
  finished.section({"a"});
  finished.close();
  testing::SegmentBuilder next(1001, 4096, format::kFlagSyncedMarks, 1000);
  next.section({"b"});
  FaultFileSystem fs;
  REQUIRE(fs.create_dirs(kLogDir).ok());
  for (const auto& [id, bytes] : {std::pair{uint64_t{1000}, finished.plain()}, std::pair{uint64_t{1001}, next.plain()}}) {
    auto file = fs.open(std::string(kLogDir) + "/" + segment_file_name(id), OpenMode::kCreateNew);
    REQUIRE(file.ok());
    REQUIRE((*file)->write_at(0, bytes).ok());
  }
  for (uint64_t offset : {uint64_t{2000}, uint64_t{4096}}) {
    CAPTURE(offset);
    TailReader tail = tail_of(fs, {1000, offset});
    std::vector<std::string> got;
    auto polled = poll_texts(tail, got);
    REQUIRE(!polled.ok());
    CHECK(polled.status().code() == ErrorCode::kInvalidArgument);
    CHECK(polled.status().message().find("position 1000:" + std::to_string(offset) + " lies past the end of") !=
          std::string::npos);
  }
}

}  // namespace
}  // namespace commitlog
