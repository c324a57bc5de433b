// SPDX-License-Identifier: Apache-2.0
// Compressed segments overlap flushes: while flush N's fdatasync runs on the
// commit thread, the sync thread compresses and writes flush N+1, whose
// producers are released only by N+1's own fdatasync (flush_pipeline.h).
//
// The file system here holds every fdatasync at a gate the test opens, so it
// can look at the log between "N's fdatasync started" and "N's returned".
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <future>
#include <mutex>
#include <string>
#include <thread>

#include "commitlog/commit_log.h"
#include "commitlog/replayer.h"
#include "tests/support/eventually.h"
#include "tests/support/fault_file_system.h"
#include "tests/support/loop_points.h"
#include "tests/support/manual_clock.h"

namespace commitlog {
namespace {

using testing::eventually;
using testing::kLogDir;

using namespace std::chrono_literals;
using testing::CrashMode;
using testing::FaultFileSystem;
using testing::Op;

// Holds File::sync() callers while closed, letting them through one by one.
class SyncGate {
 public:
  void close() {
    std::lock_guard lock(mu_);
    closed_ = true;
  }
  void open() {
    std::lock_guard lock(mu_);
    closed_ = false;
    cv_.notify_all();
  }
  void let_one_through() {
    std::lock_guard lock(mu_);
    ++permits_;
    cv_.notify_all();
  }
  void pass() {
    std::unique_lock lock(mu_);
    if (!closed_) return;
    ++arrived_;
    cv_.notify_all();
    // Open after FaultFileSystem::kHoldLimit, failing the test: one that
    // stopped at a REQUIRE while closed reports it instead of hanging.
    if (!cv_.wait_for(lock, testing::FaultFileSystem::kHoldLimit,
                      [&] { return !closed_ || permits_ > 0; })) {
      closed_ = false;
      FAIL_CHECK("the sync gate was never opened");
    }
    if (closed_) --permits_;
  }
  // Waits (up to 10 s) until `n` syncs have arrived at the closed gate.
  bool wait_arrived(int n) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, 10s, [&] { return arrived_ >= n; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool closed_ = false;
  int permits_ = 0;
  int arrived_ = 0;
};

// A FileSystem whose files count their writes and sync through the gate.
// Each write moves `clock` on by `write_delay` (both set before opening
// anything): to the log, staging as slow as a disk that is fast against the
// CPU, where overlap pays; no test waits for it in real time.
class GatedFileSystem final : public FileSystem {
 public:
  explicit GatedFileSystem(FileSystem& inner) : inner_(inner) {}
  SyncGate gate;
  testing::ManualClock* clock = nullptr;
  std::chrono::microseconds write_delay{0};
  uint64_t writes() const { return writes_.load(); }  // completed

  Result<std::unique_ptr<File>> open(const std::string& path, OpenMode mode,
                                     uint32_t permissions) override {
    auto file = inner_.open(path, mode, permissions);
    if (!file.ok()) return file.status();
    return std::unique_ptr<File>(new GatedFile(std::move(file).value(), *this));
  }
  Status rename(const std::string& from, const std::string& to) override {
    return inner_.rename(from, to);
  }
  Status remove(const std::string& path) override { return inner_.remove(path); }
  Result<std::vector<std::string>> list(const std::string& dir) override {
    return inner_.list(dir);
  }
  Status create_dirs(const std::string& dir, uint32_t permissions) override {
    return inner_.create_dirs(dir, permissions);
  }
  Status sync_dir(const std::string& dir) override { return inner_.sync_dir(dir); }
  bool exists(const std::string& path) override { return inner_.exists(path); }
  bool is_directory(const std::string& path) override { return inner_.is_directory(path); }

 private:
  class GatedFile final : public File {
   public:
    GatedFile(std::unique_ptr<File> inner, GatedFileSystem& fs)
        : inner_(std::move(inner)), fs_(fs) {}
    Status allocate(uint64_t offset, uint64_t length) override {
      return inner_->allocate(offset, length);
    }
    Result<std::byte*> map(uint64_t length) override { return inner_->map(length); }
    Status sync_mapped(uint64_t offset, uint64_t length) override {
      return inner_->sync_mapped(offset, length);
    }
    Status write_at(uint64_t offset, std::span<const std::byte> data) override {
      if (fs_.clock != nullptr) fs_.clock->advance(fs_.write_delay);
      const Status status = inner_->write_at(offset, data);
      fs_.writes_.fetch_add(1);
      return status;
    }
    Result<size_t> read_at(uint64_t offset, std::span<std::byte> out) override {
      return inner_->read_at(offset, out);
    }
    Status sync() override {
      fs_.gate.pass();
      return inner_->sync();
    }
    Result<uint64_t> size() override { return inner_->size(); }

   private:
    std::unique_ptr<File> inner_;
    GatedFileSystem& fs_;
  };

  FileSystem& inner_;
  std::atomic<uint64_t> writes_{0};
};

Options gated_options(FileSystem& fs, Clock* clock = nullptr) {
  Options o;
  if (clock != nullptr) o.clock = clock;
  o.directory = kLogDir;
  o.sync_policy = "batch";
  o.compression = Compression::kLz4;
  o.segment_size = 64 << 10;  // four 3,000-byte payloads: no segment switch in these tests
  o.file_system = &fs;
  return o;
}

// Little redundancy, so that a section spans several 512-byte sectors.
std::string payload(const char* name) {
  std::string text = name;
  uint64_t x = std::hash<std::string>{}(text);
  while (text.size() < 3000) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    text += static_cast<char>('a' + (x >> 59));
  }
  return text;
}

// Opens a log whose writes are slow against its syncs, waits until the
// allocator's spare segment exists (its header sync must not be the one
// held) and the log's threads sleep, and closes the gate. "first", a lone
// producer, commits its flush on its own thread (SyncThread::lead_flush) or
// hands it to the sync thread; "second", arriving during that commit, asks
// the sync thread and so turns the overlap on: its commit runs on the commit
// thread, held. Then "third" is appended.
struct HeldFlush {
  testing::ManualClock clock;
  FaultFileSystem disk;
  GatedFileSystem fs{disk};
  std::unique_ptr<CommitLog> log;
  std::future<Status> first, second, third;
  uint64_t flushes_before = 0;  // after the warm-up
  uint64_t writes_before_third = 0;

  std::future<Status> append(const char* name) {
    return std::async(std::launch::async,
                      [this, name] { return log->append(1, payload(name)).status(); });
  }

  void start() {
    fs.clock = &clock;
    fs.write_delay = 5ms;
    auto opened = CommitLog::open(gated_options(fs, &clock));
    REQUIRE(opened.ok());
    log = std::move(opened).value();
    REQUIRE(log->append(1, payload("warm-up")).ok());
    flushes_before = log->stats().flushes;
    REQUIRE(eventually([&] { return disk.calls(Op::kSyncDir) >= 2; }));
    REQUIRE(testing::await_asleep("allocator"));
    REQUIRE(testing::await_asleep("sync loop"));
    fs.gate.close();
    first = append("first");
    REQUIRE(fs.gate.wait_arrived(1));
    // first's flush, run by first itself or by the sync thread, is in its
    // fdatasync; second finds that commit in flight, so it counts as waiting
    // and then asks the sync thread, which wakes.
    second = append("second");
    REQUIRE(eventually([&] { return log->stats().producers_waiting == 2u; }));
    REQUIRE(testing::await_awake("sync loop"));
    fs.gate.let_one_through();
    REQUIRE(first.get().ok());
    REQUIRE(fs.gate.wait_arrived(2));
    writes_before_third = fs.writes();
    third = append("third");
  }
};

TEST_CASE("overlap: the next flush is compressed and written while the last one's fdatasync runs") {
  HeldFlush h;
  h.start();
  // Flush N+1 ("third") reaches the file while N's fdatasync is still held...
  CHECK(eventually([&] { return h.fs.writes() > h.writes_before_third; }));
  CHECK(h.log->stats().flushes == h.flushes_before + 1);
  CHECK(h.second.wait_for(20ms) == std::future_status::timeout);
  CHECK(h.third.wait_for(0ms) == std::future_status::timeout);
  // ...and N's return releases N's producer, not N+1's: its own fdatasync
  // must run (and is held) first.
  h.fs.gate.let_one_through();
  CHECK(h.second.get().ok());
  REQUIRE(h.fs.gate.wait_arrived(3));
  CHECK(h.third.wait_for(50ms) == std::future_status::timeout);
  h.fs.gate.open();
  CHECK(h.third.get().ok());
  const CommitLogStats stats = h.log->stats();
  CHECK(stats.flushes == h.flushes_before + 3);
  CHECK(stats.flushed_mutations == 4);
  CHECK(stats.image_bytes >= 4 * 3000);
  CHECK(stats.file_bytes > 0);
  REQUIRE(h.log->close().ok());

  ReplayOptions replay;
  replay.file_system = &h.disk;
  std::vector<std::string> replayed;
  const ReplayReport report = replay_directory(kLogDir, replay, [&](const ReplayedMutation& m) {
    replayed.emplace_back(reinterpret_cast<const char*>(m.payload.data()), m.payload.size());
    return Status{};
  });
  REQUIRE(report.status.ok());
  CHECK(replayed == std::vector<std::string>{payload("warm-up"), payload("first"),
                                             payload("second"), payload("third")});
}

TEST_CASE("overlap: a power loss with two flushes unsynced is a torn tail, never corruption") {
  // N's section is written with its header; N+1's header is held back until
  // N is durable. Were it written, a crash that keeps N+1 and tears N would
  // read as damage followed by a valid flush: corruption.
  HeldFlush h;
  h.start();
  REQUIRE(eventually([&] { return h.fs.writes() > h.writes_before_third; }));
  h.disk.pull_plug();
  h.fs.gate.open();
  CHECK_FALSE(h.second.get().ok());
  CHECK_FALSE(h.third.get().ok());
  h.log.reset();
  for (CrashMode mode : testing::kAllCrashModes) {
    for (uint64_t seed = 1; seed <= 200; ++seed) {
      CAPTURE(testing::crash_mode_name(mode));
      CAPTURE(seed);
      auto crashed = h.disk.crash(mode, seed);
      ReplayOptions replay;
      replay.file_system = crashed.get();
      std::vector<std::string> replayed;
      const ReplayReport report = replay_directory(kLogDir, replay, [&](const ReplayedMutation& m) {
        replayed.emplace_back(reinterpret_cast<const char*>(m.payload.data()), m.payload.size());
        return Status{};
      });
      CHECK_MESSAGE(report.status.ok(), report.status.to_string());
      CHECK(report.corruptions == 0);
      REQUIRE(replayed.size() >= 2);  // what was acknowledged
      CHECK(replayed[0] == payload("warm-up"));
      CHECK(replayed[1] == payload("first"));
      CHECK(replayed.size() <= 4);
    }
  }
}

}  // namespace
}  // namespace commitlog
