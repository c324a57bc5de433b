// SPDX-License-Identifier: Apache-2.0
// I/O faults: EIO and ENOSPC from open, fallocate, mmap, msync, fdatasync,
// pwrite and the directory fsync, injected through a FaultFileSystem.
//
// What must hold for each: the error reaches the caller with its code and a
// message naming the failed operation; nothing is acknowledged that a crash
// then loses (every acknowledged append is in every crash image); and, under
// commit_failure_policy stop, the failure is sticky: once an append or sync
// failed, every later one fails the same way, even after the fault is gone.
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "commitlog/commit_log.h"
#include "commitlog/replayer.h"
#include "tests/support/durable_policies.h"
#include "tests/support/fault_file_system.h"
#include "tests/support/log_files.h"

namespace commitlog {
namespace {

using testing::CrashMode;
using testing::FaultFileSystem;
using testing::kLogDir;
using testing::Op;

ErrorCode code_for(int error) { return error == ENOSPC ? ErrorCode::kNoSpace : ErrorCode::kIoError; }

Options fault_options(FaultFileSystem& fs, const std::string& policy = "batch",
                      CommitFailurePolicy failure = CommitFailurePolicy::kStop) {
  Options o;
  o.directory = kLogDir;
  o.sync_policy = policy;
  o.policy.group_window = std::chrono::milliseconds(1);
  o.segment_size = 64 << 10;
  o.commit_failure_policy = failure;
  o.file_system = &fs;
  return o;
}

// Waits until the allocator has made the segment after the active one
// (each segment it makes ends with a directory sync), so a fault injected
// next hits what the test means it to.
void wait_for_spare_segment(FaultFileSystem& fs) {
  for (int i = 0; i < 20000 && fs.calls(Op::kSyncDir) < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
  REQUIRE(fs.calls(Op::kSyncDir) >= 2);
}

std::string payload_text(int producer, int seq) {
  // Long enough that a dozen or two appends fill a 64 KiB segment.
  return "producer " + std::to_string(producer) + " seq " + std::to_string(seq) + " " +
         std::string(3000 + static_cast<size_t>(seq % 7) * 300, static_cast<char>('a' + seq % 26));
}

// Every acknowledged payload is in every crash image of `fs`, exactly once.
void check_acknowledged_survive(FaultFileSystem& fs, const std::vector<std::string>& acked) {
  for (CrashMode mode : testing::kAllCrashModes) {
    const std::string crash_mode = testing::crash_mode_name(mode);
    CAPTURE(crash_mode);
    const testing::Replayed replayed = testing::replay_all(*fs.crash(mode, 42), kLogDir);
    CHECK_MESSAGE(replayed.report.status.ok(), replayed.report.status.to_string());
    std::map<std::string, int> count;
    for (const auto& p : replayed.payloads) ++count[p];
    for (const auto& kept : count) CHECK_MESSAGE(kept.second == 1, kept.first.substr(0, 24));
    size_t missing = 0;
    for (const auto& a : acked) missing += count.count(a) == 0 ? 1 : 0;
    CHECK_MESSAGE(missing == 0, missing << " of " << acked.size() << " acknowledged appends lost");
  }
}

bool mentions(const Status& s, Op op) { return s.message().find(testing::op_name(op)) != std::string::npos; }

TEST_CASE("fault file system: durability follows syncs, directory entries follow sync_dir") {
  FaultFileSystem fs;
  REQUIRE(fs.create_dirs("/d").ok());
  auto file = fs.open("/d/f", OpenMode::kCreateNew);
  REQUIRE(file.ok());
  const std::string a(5000, 'a');
  REQUIRE((*file)->write_at(0, std::as_bytes(std::span(a))).ok());
  // Neither the name nor the bytes are durable yet.
  CHECK(fs.crash(CrashMode::kOldContents, 1)->files().empty());
  REQUIRE(fs.sync_dir("/d").ok());
  auto crashed = fs.crash(CrashMode::kOldContents, 1);
  REQUIRE(crashed->files() == std::vector<std::string>{"/d/f"});
  auto bytes = read_whole_file(*crashed, "/d/f");
  REQUIRE(bytes.ok());
  CHECK(bytes->size() == 5000);  // the size survives with old contents: zeros
  CHECK(std::all_of(bytes->begin(), bytes->end(), [](std::byte b) { return b == std::byte{0}; }));
  CHECK(read_whole_file(*fs.crash(CrashMode::kDrop, 1), "/d/f")->empty());
  // After the plug is pulled nothing becomes durable, and the disk is dead.
  CHECK_FALSE(fs.plug_pulled());
  fs.pull_plug();
  CHECK((*file)->sync().code() == ErrorCode::kIoError);
  CHECK(read_whole_file(*fs.crash(CrashMode::kDrop, 1), "/d/f")->empty());

  FaultFileSystem fs2;
  REQUIRE(fs2.create_dirs("/d").ok());
  auto f2 = fs2.open("/d/f", OpenMode::kCreateNew);
  REQUIRE(f2.ok());
  REQUIRE((*f2)->allocate(0, 3 * 4096).ok());
  auto map = (*f2)->map(3 * 4096);
  REQUIRE(map.ok());
  std::memset(*map, 0x11, 3 * 4096);
  REQUIRE((*f2)->sync_mapped(4096 + 100, 50).ok());  // durable: [4096, 4246)
  REQUIRE(fs2.sync_dir("/d").ok());
  std::memset(*map, 0x22, 3 * 4096);  // all unsynced from here on
  for (CrashMode mode : testing::kAllCrashModes) {
    auto c = fs2.crash(mode, 9);
    auto b = read_whole_file(*c, "/d/f");
    REQUIRE(b.ok());
    REQUIRE(b->size() == 3 * 4096);
    for (size_t i = 0; i < b->size(); ++i) {
      const auto v = static_cast<unsigned>((*b)[i]);
      const bool synced = i >= 4096 && i < 4246;
      const unsigned old = synced ? 0x11 : 0;
      bool ok = v == old;
      if (mode == CrashMode::kZero || mode == CrashMode::kRandom) ok = ok || v == 0;
      if (mode == CrashMode::kTear || mode == CrashMode::kRandom) ok = ok || v == 0x22;
      if (!ok) {
        FAIL_CHECK("byte " << i << " is " << v << " in mode " << testing::crash_mode_name(mode));
        break;
      }
    }
  }
  // Tearing keeps whole 512-byte sectors.
  auto torn = read_whole_file(*fs2.crash(CrashMode::kTear, 5), "/d/f");
  for (size_t s = 0; s < torn->size(); s += 512) {
    for (size_t i = s; i < s + 512; ++i) {
      if (((*torn)[i] == std::byte{0x22}) != ((*torn)[s] == std::byte{0x22})) {
        FAIL_CHECK("sector at " << s << " is torn inside");
        break;
      }
    }
  }
}

TEST_CASE("fault file system: injected faults, counters and the plug") {
  FaultFileSystem fs;
  REQUIRE(fs.create_dirs("/d").ok());
  fs.inject(Op::kOpen, ENOSPC, /*after_calls=*/1, /*sticky=*/false);
  CHECK(fs.open("/d/a", OpenMode::kCreateNew).ok());
  auto failed = fs.open("/d/b", OpenMode::kCreateNew);
  REQUIRE(!failed.ok());
  CHECK(failed.status().code() == ErrorCode::kNoSpace);
  CHECK(mentions(failed.status(), Op::kOpen));
  CHECK(fs.open("/d/b", OpenMode::kCreateNew).ok());  // not sticky
  CHECK(fs.calls(Op::kOpen) == 3);
  CHECK(fs.failures(Op::kOpen) == 1);

  fs.inject(Op::kSyncDir, EIO);
  CHECK(fs.sync_dir("/d").code() == ErrorCode::kIoError);
  CHECK(fs.sync_dir("/d").code() == ErrorCode::kIoError);  // sticky
  fs.clear_faults();
  CHECK(fs.sync_dir("/d").ok());
  CHECK(fs.rename("/d/a", "/d/c").ok());
  CHECK(fs.remove("/d/b").ok());
  auto names = fs.list("/d");
  REQUIRE(names.ok());
  CHECK(*names == std::vector<std::string>{"c"});
  // The rename and remove were not synced: a crash keeps the old names.
  CHECK(fs.crash(CrashMode::kDrop, 0)->files() == std::vector<std::string>{"/d/a", "/d/b"});
  fs.pull_plug();
  CHECK(fs.open("/d/x", OpenMode::kCreateNew).status().code() == ErrorCode::kIoError);  // dead
}

TEST_CASE("io fault: opening the log fails cleanly when its first segment cannot be made") {
  for (Op op : {Op::kOpen, Op::kAllocate, Op::kMap, Op::kSyncMapped, Op::kSyncDir}) {
    for (int error : {EIO, ENOSPC}) {
      const std::string op_name = testing::op_name(op);
      CAPTURE(op_name);
      CAPTURE(error);
      FaultFileSystem fs;
      fs.inject(op, error);
      auto log = CommitLog::open(fault_options(fs));
      REQUIRE_FALSE(log.ok());
      CHECK(log.status().code() == code_for(error));
      CHECK_MESSAGE(mentions(log.status(), op), log.status().to_string());
      CHECK(fs.failures(op) == 1);

      // Once the fault is gone the log opens, and what it acknowledges survives.
      fs.clear_faults();
      auto again = CommitLog::open(fault_options(fs));
      REQUIRE_MESSAGE(again.ok(), again.status().to_string());
      const std::string payload = payload_text(0, 1);
      REQUIRE((*again)->append(1, payload).ok());
      REQUIRE((*again)->close().ok());
      check_acknowledged_survive(fs, {payload});
    }
  }
}

TEST_CASE("io fault: fdatasync is not on the write path of mmapped segments, and pwrite only off it") {
  // Uncompressed segments are written through the mapping and made durable
  // with msync only: faults in fdatasync never reach them. The pwrites are
  // each new segment's header, by the allocator ahead of the producers,
  // and each finished segment's seal with its fdatasync, off the write
  // path: none per append, and a failed seal only leaves a tail unproved.
  FaultFileSystem fs;
  fs.inject(Op::kSync, ENOSPC);
  auto log = CommitLog::open(fault_options(fs));
  REQUIRE(log.ok());
  std::vector<std::string> acked;
  for (int i = 0; i < 100; ++i) {
    acked.push_back(payload_text(0, i));
    REQUIRE((*log)->append(1, acked.back()).ok());
  }
  REQUIRE((*log)->sync().ok());
  // Made: the first segment, one per switch and one ahead; sealed: one per switch.
  CHECK(fs.calls(Op::kWrite) <= 2 * (*log)->stats().segment_switches + 2);
  CHECK(fs.calls(Op::kSync) <= (*log)->stats().segment_switches);  // the seals', failing off the path
  REQUIRE((*log)->close().ok());
  check_acknowledged_survive(fs, acked);
}

// Appends on one thread until an append fails; returns the acknowledged
// payloads and the first error.
std::vector<std::string> append_until_failure(CommitLog& log, int limit, Status* first_error) {
  std::vector<std::string> acked;
  for (int i = 0; i < limit; ++i) {
    std::string payload = payload_text(0, i);
    Status s = log.append(1, payload).status();
    if (!s.ok()) {
      *first_error = s;
      break;
    }
    acked.push_back(std::move(payload));
  }
  return acked;
}

TEST_CASE("io fault: a later segment that cannot be made fails the append that needs it") {
  // The first segment and the spare one are made; the fault hits the next.
  for (Op op : {Op::kOpen, Op::kAllocate, Op::kMap, Op::kSyncDir}) {
    for (int error : {EIO, ENOSPC}) {
      for (const std::string policy : testing::kDurablePolicies) {
        const std::string op_name = testing::op_name(op);
        CAPTURE(op_name);
        CAPTURE(error);
        CAPTURE(policy);
        FaultFileSystem fs;
        auto log = CommitLog::open(fault_options(fs, policy));
        REQUIRE(log.ok());
        wait_for_spare_segment(fs);
        fs.inject(op, error);
        Status failure;
        const std::vector<std::string> acked = append_until_failure(**log, 1000, &failure);
        REQUIRE_FALSE(failure.ok());
        CHECK(failure.code() == code_for(error));
        CHECK_MESSAGE(mentions(failure, op), failure.to_string());
        CHECK(acked.size() > 10);  // two segments' worth went in first
        // Sticky, even once the fault is gone.
        fs.clear_faults();
        const Status after = (*log)->append(1, payload_text(0, 9999)).status();
        CHECK(after.code() == code_for(error));
        CHECK((*log)->sync().code() == code_for(error));
        fs.pull_plug();  // a crash now must not lose what was acknowledged
        CHECK((*log)->close().code() == code_for(error));
        log->reset();
        check_acknowledged_survive(fs, acked);
      }
    }
  }
}

// Several producer threads append until their appends fail; returns what
// was acknowledged, and every failure seen.
struct ProducersOutcome {
  std::vector<std::string> acked;
  std::vector<Status> failures;
};

ProducersOutcome run_producers_until_failure(CommitLog& log, int producers, int limit) {
  ProducersOutcome out;
  std::mutex mu;
  std::vector<std::thread> threads;
  for (int p = 0; p < producers; ++p) {
    threads.emplace_back([&, p] {
      for (int i = 0; i < limit; ++i) {
        std::string payload = payload_text(p, i);
        Status s = log.append(static_cast<uint32_t>(p), payload).status();
        std::lock_guard lock(mu);
        if (!s.ok()) {
          out.failures.push_back(s);
          return;
        }
        out.acked.push_back(std::move(payload));
      }
    });
  }
  for (auto& t : threads) t.join();
  return out;
}

TEST_CASE("io fault: a failed msync is sticky, names msync, and acknowledges nothing unsynced") {
  for (const std::string policy : testing::kDurablePolicies) {
    for (int error : {EIO, ENOSPC}) {
      for (int after : {0, 1, 5, 17}) {
        CAPTURE(policy);
        CAPTURE(error);
        CAPTURE(after);
        FaultFileSystem fs;
        Options options = fault_options(fs, policy);
        options.segment_size = 512 << 10;  // no segment switch: the fault hits a flush
        auto log = CommitLog::open(options);
        REQUIRE(log.ok());
        wait_for_spare_segment(fs);
        // One failed msync only: what follows is the log's own stickiness.
        fs.inject(Op::kSyncMapped, error, after, /*sticky=*/false);
        const ProducersOutcome outcome = run_producers_until_failure(**log, 4, 1000);
        CHECK(fs.failures(Op::kSyncMapped) == 1);
        REQUIRE(outcome.failures.size() == 4);  // every producer stopped
        for (const Status& s : outcome.failures) {
          CHECK(s.code() == code_for(error));
          CHECK_MESSAGE(mentions(s, Op::kSyncMapped), s.to_string());
        }
        const Status again = (*log)->append(1, payload_text(9, 0)).status();
        CHECK(again.code() == code_for(error));
        CHECK((*log)->sync().code() == code_for(error));
        fs.pull_plug();  // a crash now must not lose what was acknowledged
        CHECK((*log)->close().code() == code_for(error));
        log->reset();
        check_acknowledged_survive(fs, outcome.acked);
      }
    }
  }
}

TEST_CASE("io fault: compressed segments fail cleanly on pwrite and fdatasync faults") {
  // Compressed segments store each flush with pwrite + fdatasync.
  for (Op op : {Op::kWrite, Op::kSync, Op::kAllocate}) {
    for (int error : {EIO, ENOSPC}) {
      const std::string op_name = testing::op_name(op);
      CAPTURE(op_name);
      CAPTURE(error);
      FaultFileSystem fs;
      Options options = fault_options(fs, "batch");
      options.compression = Compression::kLz4;
      auto log = CommitLog::open(options);
      REQUIRE(log.ok());
      wait_for_spare_segment(fs);
      fs.inject(op, error, 3, /*sticky=*/false);
      Status failure;
      const std::vector<std::string> acked = append_until_failure(**log, 2000, &failure);
      REQUIRE_FALSE(failure.ok());
      CHECK(failure.code() == code_for(error));
      CHECK_MESSAGE(mentions(failure, op), failure.to_string());
      CHECK((*log)->append(1, payload_text(0, 9999)).status().code() == code_for(error));
      CHECK((*log)->sync().code() == code_for(error));
      fs.pull_plug();  // a crash now must not lose what was acknowledged
      log->reset();
      check_acknowledged_survive(fs, acked);
    }
  }
}

TEST_CASE("io fault: standard and direct segments, plain and LZ4, fail stickily on write and fdatasync faults") {
  // Direct: a failed O_DIRECT write has written part of its blocks (the
  // fault model); the log never retries it and reports success.
  for (DiskAccessMode mode : {DiskAccessMode::kStandard, DiskAccessMode::kDirect}) {
    for (Compression compression : {Compression::kNone, Compression::kLz4}) {
      for (Op op : {Op::kWrite, Op::kSync}) {
        const std::string op_name = testing::op_name(op);
        CAPTURE(static_cast<int>(mode));
        CAPTURE(static_cast<int>(compression));
        CAPTURE(op_name);
        FaultFileSystem fs;
        Options options = fault_options(fs, "batch");
        options.disk_access_mode = mode;
        options.compression = compression;
        auto log = CommitLog::open(options);
        REQUIRE_MESSAGE(log.ok(), log.status().to_string());
        wait_for_spare_segment(fs);
        fs.inject(op, EIO, 3, /*sticky=*/false);
        Status failure;
        const std::vector<std::string> acked = append_until_failure(**log, 2000, &failure);
        REQUIRE_FALSE(failure.ok());
        CHECK(failure.code() == ErrorCode::kIoError);
        CHECK_MESSAGE(mentions(failure, op), failure.to_string());
        CHECK(fs.failures(op) == 1);
        CHECK((*log)->append(1, payload_text(0, 9999)).status().code() == ErrorCode::kIoError);
        CHECK((*log)->sync().code() == ErrorCode::kIoError);
        fs.pull_plug();  // a crash now must not lose what was acknowledged
        log->reset();
        check_acknowledged_survive(fs, acked);
      }
    }
  }
}

TEST_CASE("io fault: commit_failure_policy ignore keeps appending after a failed msync") {
  // ignore risks losing acknowledged data: after a failed fsync the kernel
  // may have dropped the dirty pages, and a later sync that "succeeds" then
  // covers nothing. This file system really persists on the retry, so here
  // everything acknowledged survives; on a real disk it may not.
  for (const std::string policy : testing::kDurablePolicies) {
    CAPTURE(policy);
    FaultFileSystem fs;
    auto log = CommitLog::open(fault_options(fs, policy, CommitFailurePolicy::kIgnore));
    REQUIRE(log.ok());
    wait_for_spare_segment(fs);
    fs.inject(Op::kSyncMapped, EIO, 2, /*sticky=*/false);
    std::vector<std::string> acked;
    std::vector<Status> failures;
    for (int i = 0; i < 200; ++i) {  // several segment switches
      std::string payload = payload_text(0, i);
      Status s = (*log)->append(1, payload).status();
      if (s.ok()) {
        acked.push_back(std::move(payload));
      } else {
        failures.push_back(s);
      }
    }
    CHECK(fs.failures(Op::kSyncMapped) == 1);
    // The append whose sync failed gets the error; all the others succeed.
    CHECK(failures.size() <= 1);
    for (const Status& s : failures) CHECK_MESSAGE(mentions(s, Op::kSyncMapped), s.to_string());
    CHECK(acked.size() >= 199);
    CHECK((*log)->sync().ok());
    CHECK((*log)->close().ok());
    log->reset();
    check_acknowledged_survive(fs, acked);
  }
}

TEST_CASE("io fault: commit_failure_policy ignore with a disk that keeps failing") {
  // Every msync fails from now on: each append waiting for durability must
  // get the error (not wait forever), and the log stays open.
  for (const std::string policy : testing::kDurablePolicies) {
    CAPTURE(policy);
    FaultFileSystem fs;
    auto log = CommitLog::open(fault_options(fs, policy, CommitFailurePolicy::kIgnore));
    REQUIRE(log.ok());
    wait_for_spare_segment(fs);
    REQUIRE((*log)->append(1, payload_text(0, 0)).ok());
    fs.inject(Op::kSyncMapped, EIO);
    for (int i = 1; i < 4; ++i) {
      const Status s = (*log)->append(1, payload_text(0, i)).status();
      CHECK(s.code() == ErrorCode::kIoError);
      CHECK_MESSAGE(mentions(s, Op::kSyncMapped), s.to_string());
    }
    CHECK((*log)->sync().code() == ErrorCode::kIoError);
    fs.clear_faults();
    // The disk is back: appends succeed again. One more may still get the
    // error of a flush that called msync before the fault was cleared.
    Status back = (*log)->append(1, payload_text(0, 10)).status();
    if (!back.ok()) {
      CHECK_MESSAGE(mentions(back, Op::kSyncMapped), back.to_string());
      back = (*log)->append(1, payload_text(0, 11)).status();
    }
    CHECK_MESSAGE(back.ok(), back.to_string());
    CHECK((*log)->close().ok());
  }
}

TEST_CASE("io fault: commit_failure_policy die aborts the process on a failed msync") {
  // In a forked child: the parent is single-threaded here (every log of the
  // earlier tests is closed), so the child may start threads.
  std::fflush(nullptr);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    std::signal(SIGABRT, SIG_DFL);  // not doctest's crash handler
    ::alarm(30);                    // a hang ends as SIGALRM, not SIGABRT
    FaultFileSystem fs;
    auto log = CommitLog::open(fault_options(fs, "batch", CommitFailurePolicy::kDie));
    if (!log.ok()) ::_exit(2);
    if (!(*log)->append(1, payload_text(0, 0)).ok()) ::_exit(3);
    fs.inject(Op::kSyncMapped, EIO);
    (*log)->append(1, payload_text(0, 1)).status().ignore();
    ::_exit(4);  // the append came back: the process did not die
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  CAPTURE(status);
  REQUIRE(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGABRT);
}

TEST_CASE("io fault: failures to remove the spare segment at close are ignored") {
  FaultFileSystem fs;
  auto log = CommitLog::open(fault_options(fs));
  REQUIRE(log.ok());
  wait_for_spare_segment(fs);
  const std::string payload = payload_text(0, 0);
  REQUIRE((*log)->append(1, payload).ok());
  fs.inject(Op::kRemove, EIO);
  CHECK((*log)->close().ok());
  CHECK(fs.failures(Op::kRemove) == 1);
  log->reset();
  check_acknowledged_survive(fs, {payload});
}

}  // namespace
}  // namespace commitlog
