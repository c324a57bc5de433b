// SPDX-License-Identifier: Apache-2.0
// The recovery invariant, over thousands of random damages of closed logs
// and of logs killed by a power loss (the fault-injecting file system's
// crash modes), plain and LZ4:
//  - whenever verify would exit 0 (a skip-mode replay reports the log
//    intact), a replay delivers every acknowledged mutation;
//  - no replay, in any recovery mode, delivers bytes that were not written
//    at that position.
// The first has one exemption, the one the format documents: damage to the
// newest segment of a run that carries no seal (its writer crashed and no
// process opened the log since) and leaves no proof after it (no valid
// marker whose synced offset lies beyond the damage, no later compressed
// flush) is indistinguishable from what a power loss tears, so it may read
// as a torn tail; and so is that segment zeroed whole, as a crash leaves a
// file it was making. Which damages are exempt is worked out here from the
// undamaged bytes, not from the reader. Closed logs, and killed logs opened
// and closed once since, have no exemption but the whole zeroed file: every
// run's end is sealed.
//
// COMMITLOG_SEED=<n> reruns one source log; COMMITLOG_RECOVERY_DAMAGES sets
// the damages per source log.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <fmt/core.h>

#include "commitlog/lifecycle/access_mode.h"
#include "commitlog/commit_log.h"
#include "commitlog/replayer.h"
#include "segment/byte_scan.h"
#include "segment/codec.h"
#include "segment/format.h"
#include "tests/support/durable_policies.h"
#include "tests/support/fault_file_system.h"
#include "tests/support/log_files.h"
#include "tests/support/run_cli.h"
#include "tests/support/temp_dir.h"

namespace commitlog {
namespace {

using testing::CrashMode;
using testing::FaultFileSystem;
using testing::kLogDir;
using testing::seeds;

constexpr uint64_t kSmallSegmentSize = 16 << 10;
constexpr uint32_t kRecoveryProducers = 2;

// A payload names its producer and sequence number, and its filler follows
// from them, so any replayed payload can be checked byte for byte.
std::string payload_for(uint32_t producer, uint64_t seq) {
  std::string p = fmt::format("p{} s{} ", producer, seq);
  std::mt19937_64 fill(producer * 1000003ULL + seq);
  const size_t size = 20 + fill() % 400;
  while (p.size() < size) p += static_cast<char>('a' + fill() % 26);
  return p;
}

bool well_formed(std::string_view payload) {
  uint32_t producer = 0;
  unsigned long long seq = 0;
  if (std::sscanf(std::string(payload.substr(0, 40)).c_str(), "p%u s%llu ", &producer, &seq) != 2) return false;
  return payload == payload_for(producer, seq);
}

// One log image: its segment files, and what was acknowledged where.
struct Source {
  std::string name;
  bool compressed = false;
  bool killed = false;  // appends in flight at the crash may replay too
  bool reopened = false;  // killed, then opened and closed once
  std::vector<std::pair<std::string, std::vector<std::byte>>> files;  // in id order
  std::map<Position, std::string> acked;
  std::set<std::string> acked_payloads;
  // With discards: what was acknowledged at or below the highest discarded
  // position, which may be missing but never anywhere else.
  std::map<Position, std::string> discarded;
  uint64_t recycled = 0;  // segments the log recycled
  bool unsynced_dropped = false;  // killed, and the crash kept nothing unsynced (CrashMode::kDrop)
  // Compressed files: the sizes the writer's allocation steps give them.
  std::vector<std::set<uint64_t>> allocation_sizes;
  size_t newest = 0;  // the newest file that holds data: the one a torn tail may end
};

// Each source log is written in one of the access modes, by its seed.
constexpr std::array<DiskAccessMode, 3> kSourceModes = {DiskAccessMode::kLegacy, DiskAccessMode::kStandard,
                                                         DiskAccessMode::kDirect};

Options options_for(FaultFileSystem& fs, bool compressed, const std::string& policy, DiskAccessMode mode) {
  Options o;
  o.disk_access_mode = mode;
  o.directory = kLogDir;
  o.file_system = &fs;
  o.sync_policy = policy;
  o.policy.group_window = std::chrono::milliseconds(1);
  o.segment_size = kSmallSegmentSize;
  o.compression = compressed ? Compression::kLz4 : Compression::kNone;
  return o;
}

std::vector<std::pair<std::string, std::vector<std::byte>>> files_of(FileSystem& fs) {
  std::vector<std::pair<std::string, std::vector<std::byte>>> out;
  auto listed = list_segment_files(fs, kLogDir);
  REQUIRE(listed.ok());
  for (const SegmentFile& f : *listed) {
    auto bytes = read_whole_file(fs, f.path);
    REQUIRE(bytes.ok());
    out.push_back({f.path, std::move(bytes).value()});
  }
  return out;
}

// Whether a segment file carries a seal (format::kHeaderSealOffset).
bool sealed(const std::vector<std::byte>& file) {
  SegmentHeader h;
  return decode_segment_header(file, &h) == HeaderProblem::kNone && h.sealed_end != 0;
}

// Whether a segment file's first marker or compressed section is valid.
bool holds_data(const std::vector<std::byte>& file) {
  SegmentHeader h;
  if (decode_segment_header(file, &h) != HeaderProblem::kNone || file.size() < format::kHeaderSize + 40) return false;
  const std::byte* first = file.data() + format::kFirstMarkerOffset;
  return (h.flags & format::kFlagLz4Sections) != 0
             ? decode_section_header(first, h.id, format::kHeaderSize, h.flags, h.capacity).has_value()
             : decode_marker(first, h.id, format::kFirstMarkerOffset, h.flags).has_value();
}

// The sizes a compressed file takes as its writer allocates it: a power loss
// may leave any of them (format::kCompressedAllocationStep).
std::set<uint64_t> allocation_sizes(const std::vector<std::byte>& file) {
  std::set<uint64_t> sizes{format::kHeaderSize};
  SegmentHeader h;
  if (decode_segment_header(file, &h) != HeaderProblem::kNone || (h.flags & format::kFlagLz4Sections) == 0) return {};
  uint64_t allocated = format::kHeaderSize;
  for (uint64_t at = format::kHeaderSize; at + format::kSectionHeaderSize <= file.size();) {
    auto sh = decode_section_header(file.data() + at, h.id, at, h.flags, h.capacity);
    if (!sh) break;
    const uint64_t total = format::align_up(format::kSectionHeaderSize + sh->stored_length);
    if (at + total > allocated) allocated += std::max(std::min(format::kCompressedAllocationStep, h.capacity), total);
    sizes.insert(allocated);
    at += total;
  }
  return sizes;
}

// Two producers append until `target` acknowledgements; a closed log is then
// closed, a killed one loses its power (what was acknowledged by then is noted
// first) and is rebuilt as a reboot would find it; a reopened one is then
// opened and closed once, with nothing appended.
Source make_source(bool compressed, bool killed, uint64_t seed, bool reopened = false, bool discards = false) {
  Source s;
  s.compressed = compressed;
  s.killed = killed;
  s.reopened = reopened;
  std::mt19937_64 rng(seed);
  const std::string policy = testing::kDurablePolicies[seed % testing::kDurablePolicies.size()];
  const CrashMode mode = testing::kAllCrashModes[rng() % testing::kAllCrashModes.size()];
  const DiskAccessMode access = kSourceModes[seed % kSourceModes.size()];
  s.name = fmt::format("{} {} {} {} seed {}", killed ? reopened ? "killed+reopened" : "killed" : "closed",
                       compressed ? "lz4" : "plain", access_mode_name(access), policy, seed);
  if (killed) s.name += fmt::format(" ({})", testing::crash_mode_name(mode));
  s.unsynced_dropped = killed && mode == CrashMode::kDrop;
  FaultFileSystem fs;
  auto log = CommitLog::open(options_for(fs, compressed, policy, access));
  REQUIRE_MESSAGE(log.ok(), log.status().to_string());
  const uint64_t target = 150 + rng() % 200;
  std::mutex mu;
  std::map<Position, std::string> acked;
  std::atomic<uint64_t> count{0};
  std::atomic<uint32_t> finished{0};
  std::atomic<bool> stop{false};
  Position discarded;  // guarded by mu
  auto produce = [&](uint32_t p) {
    for (uint64_t seq = 0; !stop.load(); ++seq) {
      std::string payload = payload_for(p, seq);
      auto at = (*log)->append(p, payload);
      if (!at.ok()) break;
      std::lock_guard lock(mu);
      acked[*at] = std::move(payload);
      // As a store's memtable flush: the first acknowledgement in a newer
      // segment discards every table up to itself.
      if (discards && at->segment > discarded.segment) {
        discarded = *at;
        for (uint32_t table = 0; table < kRecoveryProducers; ++table) (*log)->discard(table, *at).ignore();
      }
      if (count.fetch_add(1) + 1 >= target) stop.store(true);
    }
    finished.fetch_add(1);
  };
  std::vector<std::thread> threads;
  for (uint32_t p = 0; p < kRecoveryProducers; ++p) threads.emplace_back(produce, p);
  if (killed) {
    while (!stop.load() && finished.load() < kRecoveryProducers) std::this_thread::yield();
    {
      std::lock_guard lock(mu);
      s.acked = acked;
    }
    fs.pull_plug();
  }
  for (auto& t : threads) t.join();
  s.recycled = (*log)->metrics().segments_recycled;
  if (killed) {
    (*log)->close().ignore();  // the power is off
    log->reset();
    auto rebooted = fs.crash(mode, seed);
    if (reopened) {
      auto again = CommitLog::open(options_for(*rebooted, compressed, policy, access));
      REQUIRE_MESSAGE(again.ok(), again.status().to_string());
      REQUIRE((*again)->close().ok());
    }
    s.files = files_of(*rebooted);
  } else {
    REQUIRE((*log)->close().ok());
    log->reset();
    s.acked = acked;
    s.files = files_of(fs);
  }
  for (auto it = s.acked.begin(); it != s.acked.end() && it->first <= discarded;) {
    s.discarded.insert(*it);
    it = s.acked.erase(it);
  }
  for (const auto& [position, payload] : s.acked) s.acked_payloads.insert(payload);
  for (const auto& [position, payload] : s.discarded) s.acked_payloads.insert(payload);
  for (size_t i = 0; i < s.files.size(); ++i) {
    s.allocation_sizes.push_back(allocation_sizes(s.files[i].second));
    if (holds_data(s.files[i].second)) s.newest = i;
  }
  return s;
}

// Whether anything at or after `from` in the undamaged `file` proves that
// the bytes at `at` had been durable: a valid marker whose synced offset lies
// beyond them, or in a compressed file a section that starts a later flush.
bool proof_after(const std::vector<std::byte>& file, uint64_t at, uint64_t from) {
  SegmentHeader h;
  if (decode_segment_header(file, &h) != HeaderProblem::kNone) return false;
  if ((h.flags & format::kFlagLz4Sections) != 0) {
    for (uint64_t s = format::kHeaderSize; s + format::kSectionHeaderSize <= file.size();) {
      auto sh = decode_section_header(file.data() + s, h.id, s, h.flags, h.capacity);
      if (!sh) return false;
      if (s >= from && (sh->flags & format::kSectionJoined) == 0) return true;
      s = format::align_up(s + format::kSectionHeaderSize + sh->stored_length);
    }
    return false;
  }
  for (uint64_t m = format::align_up(from); m + format::kMarkerSize <= file.size(); m += format::kAlignment) {
    auto marker = decode_marker(file.data() + m, h.id, m, h.flags);
    if (marker && marker->next != format::kEndOfSegment && marker->synced > at) return true;
  }
  return false;
}

// Where a file's data ends: a plain segment's end marker (the last valid
// one), a compressed segment's last valid section's end; else its last
// non-zero byte.
uint64_t data_end_of(const std::vector<std::byte>& file) {
  SegmentHeader h;
  if (decode_segment_header(file, &h) != HeaderProblem::kNone) return nonzero_end(file, 0);
  if ((h.flags & format::kFlagLz4Sections) != 0) {
    uint64_t end = format::kHeaderSize;
    for (uint64_t at = format::kHeaderSize; at + format::kSectionHeaderSize <= file.size();) {
      auto sh = decode_section_header(file.data() + at, h.id, at, h.flags, h.capacity);
      if (!sh) break;
      at = end = format::align_up(at + format::kSectionHeaderSize + sh->stored_length);
    }
    return end;
  }
  for (uint64_t m = format::kFirstMarkerOffset; m + format::kMarkerSize <= file.size();) {
    auto marker = decode_marker(file.data() + m, h.id, m, h.flags);
    if (!marker) return m;
    if (marker->next == format::kEndOfSegment) return m;
    m = marker->next;
  }
  return nonzero_end(file, 0);
}

struct Damaged {
  std::vector<std::pair<std::string, std::vector<std::byte>>> files;
  std::string what;
  bool exempt = false;  // the documented case: may read as a torn tail
  bool wiped = false;   // exempt as the newest file zeroed whole
};

Damaged damage(const Source& s, std::mt19937_64& rng) {
  Damaged d{s.files, "", false};
  const size_t n = d.files.size();
  const size_t target = rng() % 2 == 0 ? n - 1 : rng() % n;
  std::vector<std::byte>& bytes = d.files[target].second;
  const std::vector<std::byte>& original = s.files[target].second;
  // Most damage where the data is.
  const uint64_t data = std::min<uint64_t>(bytes.size(), nonzero_end(bytes, 0) + 64);
  auto offset = [&] { return rng() % data; };
  uint64_t lo = 0, hi = 0;
  bool detectable = false;  // always reported, whatever the bytes after it
  switch (rng() % 8) {
    case 0: {
      const int flips = 1 + static_cast<int>(rng() % 4);
      lo = UINT64_MAX;
      for (int i = 0; i < flips; ++i) {
        const uint64_t at = offset();
        bytes[at] ^= std::byte(1u << (rng() % 8));
        lo = std::min(lo, at);
        hi = std::max(hi, at + 1);
      }
      d.what = fmt::format("{} bit flips in [{}, {})", flips, lo, hi);
      break;
    }
    case 1:
      lo = offset();
      hi = std::min<uint64_t>(bytes.size(), lo + 1 + rng() % 64);
      for (uint64_t i = lo; i < hi; ++i) bytes[i] = std::byte(rng());
      d.what = fmt::format("garbage at [{}, {})", lo, hi);
      break;
    case 2:
      lo = rng() % 2 == 0 ? offset() / 512 * 512 : offset();
      hi = std::min<uint64_t>(bytes.size(), lo + (rng() % 2 == 0 ? 512 : 1 + rng() % 2048));
      std::fill(bytes.begin() + static_cast<ptrdiff_t>(lo), bytes.begin() + static_cast<ptrdiff_t>(hi), std::byte{0});
      d.what = fmt::format("zeros at [{}, {})", lo, hi);
      break;
    case 3:
      lo = offset();
      hi = bytes.size();
      bytes.resize(lo);
      // Only a compressed file cut where a power loss may leave it looks torn.
      detectable = !s.allocation_sizes[target].contains(lo);
      d.what = fmt::format("cut at {}", lo);
      break;
    case 4:
      lo = offset();
      hi = bytes.size();
      std::fill(bytes.begin() + static_cast<ptrdiff_t>(lo), bytes.end(), std::byte{0});
      d.what = fmt::format("zeros from {} to the end", lo);
      break;
    case 5: {
      const size_t other = rng() % n;
      bytes = s.files[other].second;
      detectable = true;  // its header names another segment
      d.what = fmt::format("a copy of segment {}", other);
      break;
    }
    case 7: {
      // Zeros ending where the data ends: at a plain file's end marker (or
      // over it), at the end of a compressed file's last section.
      hi = data_end_of(original);
      if (rng() % 2 == 0) hi = std::min<uint64_t>(bytes.size(), hi + format::kMarkerSize);
      lo = hi > format::kHeaderSize ? format::kHeaderSize + rng() % (hi - format::kHeaderSize) : hi;
      std::fill(bytes.begin() + static_cast<ptrdiff_t>(lo), bytes.begin() + static_cast<ptrdiff_t>(hi), std::byte{0});
      d.what = fmt::format("zeros at [{}, {}), ending at or over the end of the data", lo, hi);
      break;
    }
    default: {
      const size_t other = rng() % n;
      std::swap(bytes, d.files[other].second);
      detectable = true;
      d.what = fmt::format("swapped with segment {}", other);
      break;
    }
  }
  d.what = fmt::format("segment {} of {}: {}", target, n, d.what);
  if (bytes == original) d.what += " (no change)";
  // A source log is one run: only its newest segment with data may be torn.
  // A newest file zeroed whole is what a crash while the allocator made it
  // leaves, and like a deleted file it keeps no record of what it held.
  d.wiped = target == s.newest && bytes != original && nonzero_end(bytes, 0) == 0;
  d.exempt = d.wiped || (target == s.newest && bytes != original && !detectable && !sealed(original) &&
                         !proof_after(original, lo, hi));
  return d;
}

struct Outcome {
  ReplayReport report;
  std::map<Position, std::string> delivered;
  std::string bad;  // the first delivered payload that was never written there
};

Outcome replay(const Source& s, const Damaged& d, RecoveryMode mode) {
  FaultFileSystem fs;
  REQUIRE(fs.create_dirs(kLogDir).ok());
  for (const auto& [path, bytes] : d.files) {
    auto f = fs.open(path, OpenMode::kCreateNew);
    REQUIRE(f.ok());
    REQUIRE((*f)->write_at(0, bytes).ok());
  }
  Outcome out;
  ReplayOptions options;
  options.mode = mode;
  options.file_system = &fs;
  out.report = replay_directory(kLogDir, options, [&](const ReplayedMutation& m) {
    const std::string payload(reinterpret_cast<const char*>(m.payload.data()), m.payload.size());
    const std::string* at = nullptr;
    for (const auto* known : {&s.acked, &s.discarded}) {
      if (auto it = known->find(m.position); it != known->end()) at = &it->second;
    }
    const bool written = at != nullptr ? *at == payload
                                       : s.killed && well_formed(payload) && !s.acked_payloads.contains(payload);
    if (!written && out.bad.empty()) out.bad = "bytes never written at " + m.position.to_string();
    out.delivered[m.position] = payload;
    return Status{};
  });
  return out;
}

// `commitlog verify` on the same bytes exits 0 exactly when the library's
// skip-mode replay found the log intact.
void check_verify_exit(const Damaged& d, const ReplayReport& report) {
  testing::TempDir dir;
  for (const auto& [path, bytes] : d.files) {
    testing::write_file(dir.file(path.substr(path.rfind('/') + 1)), bytes);
  }
  const testing::CliResult r = testing::run_cli(COMMITLOG_CLI, {"verify", dir.path()});
  CHECK_MESSAGE(r.exit_code == (report.intact() ? 0 : 1), r.out << r.err);
}

std::string missing_acked(const Source& s, const Outcome& o) {
  for (const auto& [position, payload] : s.acked) {
    if (!o.delivered.contains(position)) return "acknowledged mutation at " + position.to_string() + " not delivered";
  }
  return "";
}

int damages_per_source(int normal) {
  if (const char* n = std::getenv("COMMITLOG_RECOVERY_DAMAGES"); n != nullptr && *n != '\0') return std::atoi(n);
  return normal;
}

// Replays `s` damaged `damages` times; returns how many damages were exempt
// as unproved tails (a newest file zeroed whole is not counted).
int check_source(const Source& s, int damages, uint64_t seed) {
  CAPTURE(s.name);
  std::mt19937_64 rng(seed);
  int exempt = 0;
  for (int i = 0; i < damages; ++i) {
    const Damaged d = damage(s, rng);
    CAPTURE(d.what);
    const Outcome verify = replay(s, d, RecoveryMode::kSkip);
    REQUIRE_MESSAGE(verify.bad.empty(), verify.bad);
    exempt += d.exempt && !d.wiped;
    for (RecoveryMode mode : {RecoveryMode::kTolerateTornTail, RecoveryMode::kPointInTime, RecoveryMode::kAbsolute}) {
      const Outcome r = replay(s, d, mode);
      REQUIRE_MESSAGE(r.bad.empty(), r.bad);
      if (verify.report.intact() && !d.exempt && mode != RecoveryMode::kAbsolute) {
        const std::string missing = missing_acked(s, r);
        REQUIRE_MESSAGE(missing.empty(), missing);
      }
    }
    if (verify.report.intact() && !d.exempt) {
      const std::string missing = missing_acked(s, verify);
      REQUIRE_MESSAGE(missing.empty(), missing);
    }
    if (i % 40 == 0) check_verify_exit(d, verify.report);
  }
  return exempt;
}

TEST_CASE("recovery property: closed logs, plain and LZ4, under random damage") {
  int total = 0, exempt = 0;
  for (uint64_t seed : seeds(0x5100, 4)) {
    for (bool compressed : {false, true}) {
      const Source s = make_source(compressed, false, seed);
      // Undamaged, every mode delivers everything.
      const Outcome clean = replay(s, {s.files, "none", false}, RecoveryMode::kAbsolute);
      REQUIRE(clean.report.intact());
      CHECK(missing_acked(s, clean).empty());
      const int n = damages_per_source(130);
      exempt += check_source(s, n, seed * 7 + compressed);
      total += n;
    }
  }
  MESSAGE(total << " damages of closed logs");
  CHECK(exempt == 0);
}

TEST_CASE("recovery property: logs killed by a power loss, then opened and closed once, under random damage") {
  int total = 0, exempt = 0;
  for (uint64_t seed : seeds(0x7100, 6)) {
    for (bool compressed : {false, true}) {
      const Source s = make_source(compressed, true, seed, /*reopened=*/true);
      CAPTURE(s.name);
      const Outcome reopened = replay(s, {s.files, "none", false}, RecoveryMode::kTolerateTornTail);
      REQUIRE_MESSAGE(reopened.report.intact(), reopened.report.status.to_string());
      CHECK(reopened.report.unproved_tails.empty());
      CHECK(missing_acked(s, reopened).empty());
      const int n = damages_per_source(65);
      exempt += check_source(s, n, seed * 13 + compressed);
      total += n;
    }
  }
  MESSAGE(total << " damages of killed logs opened and closed since");
  CHECK(exempt == 0);
}

// Discards running in standard and direct modes: later segments are written
// over spares with an earlier segment's bytes in place, which must never be
// delivered, nor read as damage when intact.
TEST_CASE("recovery property: recycled segments, closed and killed, under random damage") {
  int total = 0, dropped = 0;
  uint64_t recycled = 0;
  for (uint64_t seed : seeds(0x8100, 10)) {
    for (bool killed : {false, true}) {
      // Seeds whose access mode (kSourceModes) is standard or direct.
      const uint64_t source_seed = seed * 3 + 1 + seed % 2;
      const Source s = make_source(false, killed, source_seed, false, /*discards=*/true);
      CAPTURE(s.name);
      recycled += s.recycled;
      const Outcome undamaged = replay(s, {s.files, "none", false}, RecoveryMode::kTolerateTornTail);
      REQUIRE_MESSAGE(undamaged.report.intact(), undamaged.report.status.to_string());
      REQUIRE(undamaged.bad.empty());
      // Nothing torn: what follows the data is an earlier segment's, or zeros.
      if (!killed || s.unsynced_dropped) CHECK(undamaged.report.problems.empty());
      dropped += s.unsynced_dropped;
      CHECK(missing_acked(s, undamaged).empty());
      const int n = damages_per_source(40);
      check_source(s, n, source_seed * 17 + killed);
      total += n;
    }
  }
  MESSAGE(total << " damages of logs with recycled segments");
  CHECK(recycled > 0);
  CHECK(dropped > 0);
}

TEST_CASE("recovery property: logs killed by a power loss, plain and LZ4, as the crash left them and damaged") {
  int total = 0, exempt = 0;
  for (uint64_t seed : seeds(0x6100, 8)) {
    for (bool compressed : {false, true}) {
      const Source s = make_source(compressed, true, seed);
      CAPTURE(s.name);
      // The crash alone loses nothing acknowledged and is no corruption.
      const Outcome crashed = replay(s, {s.files, "none", false}, RecoveryMode::kTolerateTornTail);
      REQUIRE_MESSAGE(crashed.report.intact(), crashed.report.status.to_string());
      REQUIRE(crashed.bad.empty());
      CHECK(missing_acked(s, crashed).empty());
      const int n = damages_per_source(65);
      exempt += check_source(s, n, seed * 11 + compressed);
      total += n;
    }
  }
  MESSAGE(total << " damages of killed logs, " << exempt << " of them exempt");
}

}  // namespace
}  // namespace commitlog
