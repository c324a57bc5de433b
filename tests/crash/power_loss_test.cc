// SPDX-License-Identifier: Apache-2.0
// Power loss at random moments: producers on threads and on Boost.Fiber
// fibers append to a log on a FaultFileSystem; at a random moment the test
// notes what was acknowledged and pulls the plug; then every crash mode's
// image is replayed (strict) and must hold every acknowledged mutation exactly
// once, nothing that was never appended, and per producer a gap-free prefix of
// its sequence numbers.
//
// The seed of each run is printed on failure (CAPTURE). To rerun one:
//   COMMITLOG_SEED=<seed> commitlog_tests -tc="<the failed test case>"
// COMMITLOG_POWER_LOSS_RUNS=<n> sets the runs per test case (a fifth of the
// default under sanitizers); COMMITLOG_POWER_LOSS_VERBOSE=1 prints each run's
// acknowledgements, timings and the replay findings. A seed fixes the crash
// target, payloads and crash images; thread timing still varies.
#include <doctest/doctest.h>

#include <array>
#include <atomic>
#include <boost/fiber/all.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "commitlog/lifecycle/access_mode.h"
#include "commitlog/commit_log.h"
#include "commitlog/replayer.h"
#include "segment/checksum.h"
#include "tests/support/durable_policies.h"
#include "tests/support/fault_file_system.h"
#include "tests/support/log_files.h"
#include "tests/support/sanitizers.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_keys.h"

namespace commitlog {
namespace {

using testing::CrashMode;
using testing::FaultFileSystem;
using testing::kLogDir;

constexpr uint64_t kPowerLossSegmentSize = 64 << 10;
constexpr uint32_t kThreadProducers = 2;  // producer 0 appends batches
constexpr uint32_t kFiberProducers = 3;   // all on one thread
constexpr uint32_t kProducers = kThreadProducers + kFiberProducers;

constexpr int kSanitizerDivisor = testing::kSanitizer ? 5 : 1;

uint64_t mix(uint64_t x) {  // splitmix64
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// The seeds a test case runs (testing::seeds): `runs` of them, or
// COMMITLOG_POWER_LOSS_RUNS, a sanitizer build a fraction.
std::vector<uint64_t> power_loss_seeds(uint64_t base, int runs) {
  if (const char* s = std::getenv("COMMITLOG_POWER_LOSS_RUNS"); s != nullptr && *s != '\0') {
    runs = std::atoi(s);
  } else {
    runs = std::max(1, runs / kSanitizerDivisor);
  }
  return testing::seeds(base, runs);
}

// A payload names its run, producer and sequence number, and carries a
// filler derived from them, so a replayed payload is checked byte for byte:
//   u32 magic | u32 run | u32 producer | u32 size | u64 seq | filler
struct Key {
  uint32_t run = 0;
  uint32_t producer = 0;
  uint64_t seq = 0;
};
constexpr uint32_t kPayloadMagic = 0x504c4f47;
constexpr size_t kPayloadHeader = 24;

size_t payload_size(const Key& k) {
  const uint64_t h = mix(mix(k.run * 1000003ULL + k.producer) ^ k.seq);
  if (h % 16 == 0) return 4096 + (h >> 8) % 12000;  // now and then a large one
  return kPayloadHeader + (h >> 8) % 1500;
}

// The filler's 8-byte word `i` (the last word may be cut short).
uint64_t filler_word(uint64_t base, uint64_t i) { return mix(base + i); }

uint64_t filler_base(const Key& k) {
  return mix(k.seq ^ (uint64_t{k.producer} << 48) ^ (uint64_t{k.run} << 32));
}

std::vector<std::byte> make_payload(const Key& k) {
  std::vector<std::byte> p(payload_size(k));
  store_u32(p.data(), kPayloadMagic);
  store_u32(p.data() + 4, k.run);
  store_u32(p.data() + 8, k.producer);
  store_u32(p.data() + 12, static_cast<uint32_t>(p.size()));
  store_u64(p.data() + 16, k.seq);
  const uint64_t base = filler_base(k);
  for (size_t at = kPayloadHeader, i = 0; at < p.size(); at += 8, ++i) {
    const uint64_t word = filler_word(base, i);
    std::memcpy(p.data() + at, &word, std::min<size_t>(8, p.size() - at));
  }
  return p;
}

// The key of a payload this test made, or nullopt for anything else.
std::optional<Key> parse_payload(std::span<const std::byte> p) {
  if (p.size() < kPayloadHeader || load_u32(p.data()) != kPayloadMagic ||
      load_u32(p.data() + 12) != p.size()) {
    return std::nullopt;
  }
  Key k{load_u32(p.data() + 4), load_u32(p.data() + 8), load_u64(p.data() + 16)};
  if (payload_size(k) != p.size()) return std::nullopt;
  const uint64_t base = filler_base(k);
  size_t at = kPayloadHeader, i = 0;
  for (; at + 8 <= p.size(); at += 8, ++i) {
    if (load_u64(p.data() + at) != filler_word(base, i)) return std::nullopt;
  }
  const uint64_t last = filler_word(base, i);
  if (at < p.size() && std::memcmp(p.data() + at, &last, p.size() - at) != 0) return std::nullopt;
  return k;
}

// What one process run of the log did, as the checks need it.
struct RunRecord {
  uint32_t run = 0;
  std::vector<uint64_t> attempted;       // per producer: seqs [0, n) were passed to append
  std::vector<uint64_t> acked_at_crash;  // per producer: [0, n) acknowledged before the plug
  std::string early_failure;             // an append failed before the plug was pulled
  // With discards: per producer, the position each acknowledged seq's append
  // (its batch's last entry) returned, and the highest position discarded:
  // a prefix of each producer's seqs at or below it may be gone.
  std::vector<std::vector<Position>> acked_positions;
  Position discarded;
  uint64_t recycled = 0;  // segments_recycled at the close
};

struct PowerLossProducer {
  std::atomic<uint64_t> attempted{0};
  std::atomic<uint64_t> acked{0};
  std::atomic<bool> done{false};
  std::string error;  // written by the producer before `done`
};

Options log_options(FaultFileSystem& fs, const std::string& policy,
                    Compression compression = Compression::kNone, uint64_t direct_threshold = 0,
                    DiskAccessMode access_mode = DiskAccessMode::kLegacy,
                    std::shared_ptr<const KeyProvider> keys = nullptr) {
  Options o;
  o.encryption = std::move(keys);
  o.compression = compression;
  o.disk_access_mode = access_mode;
  o.direct_write_threshold = direct_threshold;
  o.directory = kLogDir;
  o.sync_policy = policy;
  o.policy.group_window = std::chrono::milliseconds(1);
  o.segment_size = kPowerLossSegmentSize;
  o.file_system = &fs;
  return o;
}

// Runs one process run of the log on `fs` until the plug is pulled after
// about `target_acks` acknowledgements, then closes and destroys the log.
// With `wait` kNothing, each append returns at once and is acknowledged
// after wait_durable() of its (last) position.
RunRecord run_until_power_loss(FaultFileSystem& fs, const std::string& policy, uint32_t run,
                               uint64_t seed, uint64_t target_acks,
                               Compression compression = Compression::kNone,
                               uint64_t direct_threshold = 0,
                               DiskAccessMode access_mode = DiskAccessMode::kLegacy,
                               AppendWait wait = AppendWait::kPolicy, bool discards = false,
                               const std::shared_ptr<const KeyProvider>& keys = nullptr) {
  RunRecord record;
  record.run = run;
  auto log = CommitLog::open(log_options(fs, policy, compression, direct_threshold, access_mode, keys));
  REQUIRE_MESSAGE(log.ok(), log.status().to_string());
  CommitLog& cl = **log;
  // As a store whose memtables flush: the first acknowledgement in a newer
  // segment discards every table up to itself, noted before the discard.
  std::mutex discard_mu;
  record.acked_positions.resize(kProducers);
  auto discard_up_to = [&](Position at) {
    std::lock_guard lock(discard_mu);
    if (at.segment <= record.discarded.segment) return;
    record.discarded = at;
    for (uint32_t table = 0; table < kProducers; ++table) cl.discard(table, at).ignore();
  };

  std::vector<PowerLossProducer> producers(kProducers);
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> total_acked{0};
  std::atomic<bool> crash_started{false};
  std::atomic<bool> plug_pulled{false};
  std::mt19937_64 crash_rng(mix(seed));
  std::atomic<uint64_t> spin_counter{0};
  // The power loss, on whichever thread gets there first: a note of what was
  // acknowledged so far, a random few microseconds more of appending, the plug.
  auto crash_now = [&] {
    if (crash_started.exchange(true)) return;
    for (const auto& p : producers) record.acked_at_crash.push_back(p.acked.load());
    for (uint64_t i = crash_rng() % 4000; i > 0; --i) spin_counter.fetch_add(1, std::memory_order_relaxed);
    fs.pull_plug();
    stop.store(true);
    plug_pulled.store(true);
  };

  auto produce = [&](uint32_t p) {
    PowerLossProducer& me = producers[p];
    std::mt19937_64 rng(mix(seed ^ (uint64_t{p} << 56)));
    uint64_t seq = 0;
    while (!stop.load()) {
      const uint64_t count = p == 0 ? 1 + rng() % 3 : 1;
      std::vector<std::vector<std::byte>> payloads;
      std::vector<Mutation> mutations;
      for (uint64_t i = 0; i < count; ++i) payloads.push_back(make_payload({run, p, seq + i}));
      for (const auto& payload : payloads) mutations.push_back({p, payload});
      me.attempted.store(seq + count);
      Status status;
      Position last;
      if (p == 0) {
        auto range = cl.append_batch(mutations, {.wait = wait});
        status = range.status();
        if (range.ok()) last = range->last;
      } else {
        auto position = cl.append(p, payloads[0], {.wait = wait});
        status = position.status();
        if (position.ok()) last = *position;
      }
      if (status.ok() && wait == AppendWait::kNothing) status = cl.wait_durable(last);
      if (!status.ok()) {
        // Only the power loss may fail an append here.
        if (!fs.plug_pulled()) me.error = status.to_string();
        break;
      }
      if (discards) {
        for (uint64_t i = 0; i < count; ++i) record.acked_positions[p].push_back(last);
        discard_up_to(last);
      }
      seq += count;
      me.acked.store(seq);
      if (total_acked.fetch_add(count) + count >= target_acks) crash_now();
    }
    me.done.store(true);
  };

  std::vector<std::thread> threads;
  for (uint32_t p = 0; p < kThreadProducers; ++p) threads.emplace_back(produce, p);
  threads.emplace_back([&] {
    std::vector<boost::fibers::fiber> fibers;
    for (uint32_t p = kThreadProducers; p < kProducers; ++p) fibers.emplace_back(produce, p);
    for (auto& f : fibers) f.join();
  });
  if (target_acks == 0) crash_now();
  // Wait for the crash, or for a producer that failed without one.
  auto failed_early = [&] {
    for (const auto& p : producers) {
      if (p.done.load() && !p.error.empty()) return true;
    }
    return false;
  };
  while (!plug_pulled.load() && !failed_early()) {
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  crash_now();  // a no-op unless a producer failed early
  for (auto& t : threads) t.join();
  record.recycled = cl.metrics().segments_recycled;
  cl.close().ignore();  // the power is off: the close may well fail
  log->reset();

  for (auto& p : producers) {
    record.attempted.push_back(p.attempted.load());
    if (record.early_failure.empty()) record.early_failure = p.error;
  }
  return record;
}

std::string describe(const ReplayReport& report) {
  std::string s = "replay: " + report.status.to_string() + ", " + std::to_string(report.segments) +
                  " segments, " + std::to_string(report.mutations) + " mutations, " +
                  std::to_string(report.torn_tail_bytes) + " torn-tail bytes";
  for (const auto& p : report.problems) {
    s += "\n  " + p.file + " @" + std::to_string(p.offset) + ": " + p.kind + " (" +
         std::to_string(p.bytes) + " bytes" + (p.corruption ? ", corruption)" : ")");
  }
  return s;
}

// "acked/attempted" per producer.
std::string summary(const RunRecord& r) {
  std::string s = "run " + std::to_string(r.run) + " acked/attempted:";
  for (size_t p = 0; p < r.attempted.size(); ++p) {
    s += " " + std::to_string(r.acked_at_crash[p]) + "/" + std::to_string(r.attempted[p]);
  }
  return s;
}

std::string seq_list(const std::vector<uint64_t>& seqs) {
  std::string s;
  for (size_t i = 0; i < seqs.size() && i < 40; ++i) s += std::to_string(seqs[i]) + " ";
  if (seqs.size() > 40) s += "...";
  return s;
}

// Replays `fs` strictly and checks it against the runs that wrote it.
// Returns the first violation, or "" when everything holds. `replayed`
// receives, per run and producer, how many mutations came back.
std::string check_crash_image(FaultFileSystem& fs, const std::vector<RunRecord>& runs,
                              std::map<std::pair<uint32_t, uint32_t>, uint64_t>* replayed = nullptr,
                              ReplayReport* report_out = nullptr,
                              const std::shared_ptr<const KeyProvider>& keys = nullptr) {
  ReplayOptions options;
  options.keys = keys;
  options.mode = RecoveryMode::kTolerateTornTail;
  options.file_system = &fs;
  std::map<std::pair<uint32_t, uint32_t>, std::vector<uint64_t>> seen;
  std::string foreign;
  const ReplayReport report = replay_directory(kLogDir, options, [&](const ReplayedMutation& m) {
    const std::optional<Key> k = parse_payload(m.payload);
    if (!k || m.table != k->producer) {
      if (foreign.empty()) foreign = "a payload that was never appended at " + m.position.to_string();
    } else {
      seen[{k->run, k->producer}].push_back(k->seq);
    }
    return Status{};
  });
  if (report_out != nullptr) *report_out = report;
  if (!report.status.ok()) return describe(report);
  if (!foreign.empty()) return foreign + "\n" + describe(report);
  for (const auto& [key, seqs] : seen) {
    bool known = false;
    for (const RunRecord& r : runs) known = known || (r.run == key.first && key.second < kProducers);
    if (!known) return "a payload of unknown run " + std::to_string(key.first);
  }
  for (const RunRecord& r : runs) {
    for (uint32_t p = 0; p < kProducers; ++p) {
      const std::vector<uint64_t>& seqs = seen[{r.run, p}];
      const std::string who = "run " + std::to_string(r.run) + " producer " + std::to_string(p);
      // The seqs discarded: a prefix, each acknowledged at or below the
      // highest discarded position. None without discards.
      const uint64_t first = seqs.empty() ? r.acked_at_crash[p] : seqs.front();
      for (uint64_t seq = 0; seq < first; ++seq) {
        if (seq >= r.acked_positions[p].size() || r.discarded < r.acked_positions[p][seq]) {
          return who + ": seq " + std::to_string(seq) + " is missing, and was never discarded\n" + describe(report);
        }
      }
      for (size_t i = 0; i < seqs.size(); ++i) {
        if (seqs[i] != first + i) {
          return who + ": replayed sequence numbers are not gap-free and in order: " +
                 seq_list(seqs) + "\n" + describe(report);
        }
      }
      if (first + seqs.size() < r.acked_at_crash[p]) {
        return who + ": " + std::to_string(r.acked_at_crash[p]) + " acknowledged, only up to " +
               std::to_string(first + seqs.size()) + " replayed\n" + describe(report);
      }
      if (first + seqs.size() > r.attempted[p]) {
        return who + ": more replayed than appended";
      }
      if (replayed != nullptr) (*replayed)[{r.run, p}] = first + seqs.size();
    }
  }
  return "";
}

// One run, crashed at a random point, checked in every crash mode.
// Returns the segments the run recycled.
uint64_t power_loss_run(const std::string& policy, uint64_t seed, uint64_t max_acks,
                        Compression compression = Compression::kNone, uint64_t direct_threshold = 0,
                        DiskAccessMode access_mode = DiskAccessMode::kLegacy,
                        AppendWait wait = AppendWait::kPolicy, bool discards = false,
                        const std::shared_ptr<const KeyProvider>& keys = nullptr) {
  CAPTURE(policy);
  const bool encrypted = keys != nullptr;
  CAPTURE(encrypted);
  CAPTURE(seed);
  const std::string mode = access_mode_name(access_mode);
  CAPTURE(mode);
  std::mt19937_64 rng(mix(seed) ^ 0x1234);
  const uint64_t target = rng() % max_acks;
  CAPTURE(target);
  FaultFileSystem fs;
  const auto started = std::chrono::steady_clock::now();
  const RunRecord record =
      run_until_power_loss(fs, policy, 1, seed, target, compression, direct_threshold, access_mode,
                           wait, discards, keys);
  const auto ran = std::chrono::steady_clock::now();
  REQUIRE_MESSAGE(record.early_failure.empty(), record.early_failure);
  const std::string run_summary = summary(record);
  CAPTURE(run_summary);
  std::map<std::string, int> tails;  // problem kinds seen in the images, for COMMITLOG_POWER_LOSS_VERBOSE
  for (CrashMode mode : testing::kAllCrashModes) {
    // drop, zero and old-contents do not depend on the seed.
    const bool random = mode == CrashMode::kTear || mode == CrashMode::kRandom;
    for (uint64_t image = 0; image < (random ? 3 : 1); ++image) {
      const uint64_t crash_seed = mix(seed + image);
      const std::string crash_mode = testing::crash_mode_name(mode);
      CAPTURE(crash_mode);
      CAPTURE(crash_seed);
      auto crashed = fs.crash(mode, crash_seed);
      ReplayReport report;
      const std::string problem = check_crash_image(*crashed, {record}, nullptr, &report, keys);
      REQUIRE_MESSAGE(problem.empty(), problem);
      for (const ReplayProblem& p : report.problems) ++tails[p.kind];
    }
  }
  if (std::getenv("COMMITLOG_POWER_LOSS_VERBOSE") != nullptr) {
    using Ms = std::chrono::duration<double, std::milli>;
    std::string kinds;
    for (const auto& [kind, n] : tails) kinds += "; " + std::to_string(n) + "x " + kind;
    std::printf("%s seed %llu target %llu: %s; run %.1f ms, crash images %.1f ms%s\n", policy.c_str(),
                static_cast<unsigned long long>(seed), static_cast<unsigned long long>(target),
                run_summary.c_str(), Ms(ran - started).count(),
                Ms(std::chrono::steady_clock::now() - ran).count(), kinds.c_str());
  }
  return record.recycled;
}

// The durable policies, one per seed in turn.
std::string durable_policy(uint64_t seed) {
  return testing::kDurablePolicies[seed % testing::kDurablePolicies.size()];
}

TEST_CASE("power loss: batch policy, random crash points, every crash mode") {
  for (uint64_t seed : power_loss_seeds(0xb000, 150)) power_loss_run("batch", seed, 400);
}

TEST_CASE("power loss: group policy (1 ms window), random crash points, every crash mode") {
  for (uint64_t seed : power_loss_seeds(0x9000, 60)) power_loss_run("group", seed, 300);
}

TEST_CASE("power loss: adaptive policy, random crash points, every crash mode") {
  // Its holds end on a producer's request or a timer, and it counts arrivals
  // outside the waiters: neither may let a producer go before its flush.
  for (uint64_t seed : power_loss_seeds(0xa000, 60)) power_loss_run("adaptive", seed, 300);
}

TEST_CASE("power loss: LZ4-compressed segments, random crash points, every crash mode") {
  // Compressed segments are written with pwrite and made durable with fdatasync.
  for (uint64_t seed : power_loss_seeds(0xc000, 40)) {
    power_loss_run(durable_policy(seed), seed, 300, Compression::kLz4);
  }
}

TEST_CASE("power loss: payloads of 4 KiB and more on the direct route, plain and LZ4") {
  // About one payload in 16 is 4-16 KiB: a pwrite into a plain segment, its
  // own section of the flush's group in a compressed one.
  for (uint64_t seed : power_loss_seeds(0xd000, 40)) {
    power_loss_run(durable_policy(seed), seed, 300,
                   seed % 4 < 2 ? Compression::kNone : Compression::kLz4, 4096);
  }
}

TEST_CASE("power loss: appends that wait later, every policy, plain and LZ4, every crash mode") {
  // Each append returns at once and is acknowledged after wait_durable():
  // periodic then loses no acknowledged mutation either.
  constexpr std::array<const char*, 4> kPolicies = {"periodic", "batch", "group", "adaptive"};
  for (uint64_t seed : power_loss_seeds(0xf000, 48)) {
    power_loss_run(kPolicies[seed % 4], seed, 300,
                   seed / 4 % 2 == 0 ? Compression::kNone : Compression::kLz4, 0,
                   DiskAccessMode::kLegacy, AppendWait::kNothing);
  }
}

TEST_CASE("power loss: standard and direct, every durable policy, plain and LZ4, every crash mode") {
  // Direct: a flush ending inside a block writes it whole, and the next one
  // rewrites it; a torn rewrite tears per sector, the model's kTear.
  // Seeds in turn: the policies by seed % 3, the modes and compression by
  // seed / 3 % 4, so that each of the 12 combinations runs.
  for (uint64_t seed : power_loss_seeds(0xe000, 48)) {
    const uint64_t shape = seed / 3 % 4;
    power_loss_run(durable_policy(seed), seed, 300, shape % 2 == 0 ? Compression::kNone : Compression::kLz4,
                   seed % 5 == 0 ? 4096 : 0, shape < 2 ? DiskAccessMode::kStandard : DiskAccessMode::kDirect);
  }
}

// Discards running, as a store's memtable flushes make them: in standard
// and direct modes clean segments become spares that later segments are
// written over, their old bytes in place. No stale entry may replay (each
// payload names its run, producer and seq, checked byte for byte, and each
// producer's seqs must be gap-free), and every acknowledged mutation not
// discarded must. 1,000 runs per access mode, each checked in every crash
// mode (nine images); plain and LZ4 by seed (LZ4 needs a buffered mode).
void discard_runs(DiskAccessMode mode, uint64_t base) {
  uint64_t recycled = 0;
  for (uint64_t seed : power_loss_seeds(base, 1000)) {
    const Compression compression =
        mode != DiskAccessMode::kMmap && seed % 4 == 3 ? Compression::kLz4 : Compression::kNone;
    const uint64_t segments = power_loss_run(durable_policy(seed / 4), seed, 450, compression,
                                             seed % 7 == 0 ? 4096 : 0, mode, AppendWait::kPolicy, true);
    if (compression == Compression::kLz4 || mode == DiskAccessMode::kMmap) CHECK(segments == 0);
    recycled += segments;
  }
  if (mode != DiskAccessMode::kMmap) CHECK(recycled > 0);
}

TEST_CASE("power loss: discards running, standard, plain and LZ4, recycled segments never replay stale bytes") {
  discard_runs(DiskAccessMode::kStandard, 0x3000);
}

TEST_CASE("power loss: discards running, direct, plain and LZ4, recycled segments never replay stale bytes") {
  discard_runs(DiskAccessMode::kDirect, 0x3400);
}

TEST_CASE("power loss: discards running, mmap, discarded segments deleted") {
  discard_runs(DiskAccessMode::kMmap, 0x3800);
}

TEST_CASE("power loss: encrypted segments, sealed entries and LZ4, every access mode, with discards, every crash mode") {
  // The keys live on the real file system; the log on the fault-injecting one.
  testing::TempDir dir;
  const auto keys = testing::test_keys(dir.path() + "/keys", {1});
  // Legacy picks standard for encrypted segments; mmap seals entries only.
  constexpr std::pair<DiskAccessMode, Compression> kShapes[] = {
      {DiskAccessMode::kLegacy, Compression::kNone},   {DiskAccessMode::kLegacy, Compression::kLz4},
      {DiskAccessMode::kStandard, Compression::kNone}, {DiskAccessMode::kStandard, Compression::kLz4},
      {DiskAccessMode::kDirect, Compression::kNone},   {DiskAccessMode::kDirect, Compression::kLz4},
      {DiskAccessMode::kMmap, Compression::kNone}};
  uint64_t recycled = 0;
  for (uint64_t seed : power_loss_seeds(0xe500, 56)) {
    const auto [mode, compression] = kShapes[seed / 2 % std::size(kShapes)];
    recycled += power_loss_run(durable_policy(seed), seed, 300, compression, seed % 5 == 0 ? 4096 : 0, mode,
                               AppendWait::kPolicy, seed % 2 == 0, keys);
  }
  CHECK(recycled > 0);  // encrypted plain segments reuse spare files too
}

TEST_CASE("power loss: a second run on the crashed disk, then a second crash") {
  for (uint64_t seed : power_loss_seeds(0x2000, 40)) {
    CAPTURE(seed);
    std::mt19937_64 rng(mix(seed) ^ 0x5678);
    const std::string policy = durable_policy(seed);
    CAPTURE(policy);
    const CrashMode first_mode = testing::kAllCrashModes[rng() % testing::kAllCrashModes.size()];
    const std::string first_crash_mode = testing::crash_mode_name(first_mode);
    CAPTURE(first_crash_mode);

    FaultFileSystem first_disk;
    const RunRecord first = run_until_power_loss(first_disk, policy, 1, seed, rng() % 250);
    REQUIRE_MESSAGE(first.early_failure.empty(), first.early_failure);
    auto second_disk = first_disk.crash(first_mode, mix(seed));
    std::map<std::pair<uint32_t, uint32_t>, uint64_t> after_first;
    std::string problem = check_crash_image(*second_disk, {first}, &after_first);
    REQUIRE_MESSAGE(problem.empty(), problem);

    const RunRecord second = run_until_power_loss(*second_disk, policy, 2, mix(seed + 1), rng() % 250);
    REQUIRE_MESSAGE(second.early_failure.empty(), second.early_failure);
    for (CrashMode mode : testing::kAllCrashModes) {
      const std::string second_crash_mode = testing::crash_mode_name(mode);
      CAPTURE(second_crash_mode);
      auto third_disk = second_disk->crash(mode, mix(seed + 2));
      std::map<std::pair<uint32_t, uint32_t>, uint64_t> after_second;
      problem = check_crash_image(*third_disk, {first, second}, &after_second);
      REQUIRE_MESSAGE(problem.empty(), problem);
      // The first run's segments were durable before the second run began.
      for (uint32_t p = 0; p < kProducers; ++p) {
        CHECK(after_second[{1, p}] == after_first[{1, p}]);
      }
    }
  }
}

TEST_CASE("power loss: a crash before anything is appended leaves an empty, valid log") {
  for (const std::string policy : testing::kDurablePolicies) {
    CAPTURE(policy);
    FaultFileSystem fs;
    {
      auto log = CommitLog::open(log_options(fs, policy));
      REQUIRE(log.ok());
      fs.pull_plug();
    }
    for (CrashMode mode : testing::kAllCrashModes) {
      auto crashed = fs.crash(mode, 7);
      ReplayOptions options;
      options.file_system = crashed.get();
      uint64_t mutations = 0;
      const ReplayReport report = replay_directory(kLogDir, options, [&](const ReplayedMutation&) {
        ++mutations;
        return Status{};
      });
      CHECK_MESSAGE(report.status.ok(), describe(report));
      CHECK(mutations == 0);
    }
  }
}

// Replays one crash image of the periodic test strictly: no corruption, a
// gap-free prefix of the `appended` mutations that holds the first `synced`.
void check_periodic_image(FileSystem& fs, uint64_t appended, uint64_t synced,
                          std::map<std::string, int>& kinds) {
  ReplayOptions ro;
  ro.file_system = &fs;
  uint64_t replayed = 0;
  bool in_order = true;
  const ReplayReport report = replay_directory(kLogDir, ro, [&](const ReplayedMutation& m) {
    const std::optional<Key> k = parse_payload(m.payload);
    in_order = in_order && k.has_value() && k->seq == replayed;
    ++replayed;
    return Status{};
  });
  REQUIRE_MESSAGE(report.status.ok(), describe(report));
  CHECK(report.corruptions == 0);
  CHECK(in_order);
  CHECK(replayed >= synced);
  CHECK(replayed <= appended);
  for (const ReplayProblem& p : report.problems) ++kinds[p.kind];
}

// periodic writes markers between its fsyncs without syncing them, so a power
// loss can keep any sector of the newest segment's unsynced sections: an
// earlier section torn, a later one whole. Each marker records what the last
// completed flush covered (format::kFlagSyncedMarks), so the replayer takes
// damage no later marker proves flushed for a torn tail. A segment switch
// always flushes, so that damage is only ever in a run's newest segment:
// never corruption, and what replays is a gap-free prefix that holds
// everything an explicit sync() covered (segment/FORMAT.md, "Synced
// markers").
TEST_CASE("power loss: periodic policy, markers without fsync, strict replay") {
  for (uint64_t seed : power_loss_seeds(0x7000, 40)) {
    CAPTURE(seed);
    std::mt19937_64 rng(mix(seed));
    FaultFileSystem fs;
    Options o = log_options(fs, "periodic");
    o.policy.sync_period = std::chrono::milliseconds(20);
    o.policy.lag_block = std::chrono::milliseconds(1000);
    o.policy.marker_interval = std::chrono::milliseconds(1);
    uint64_t appended = 0, synced = 0;
    {
      auto log = CommitLog::open(o);
      REQUIRE_MESSAGE(log.ok(), log.status().to_string());
      const uint64_t sync_at = rng() % 300;
      const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(5 + rng() % 40);
      while (std::chrono::steady_clock::now() < end) {
        REQUIRE((*log)->append(1, make_payload({1, 1, appended})).ok());
        ++appended;
        // Paced, so that a segment holds several sealed, unflushed sections
        // before it fills up (a switch flushes): at full speed one fills up
        // between two markers.
        std::this_thread::sleep_for(std::chrono::microseconds(50));
        if (appended == sync_at) {
          REQUIRE((*log)->sync().ok());
          synced = appended;
        }
      }
      fs.pull_plug();
    }
    std::map<std::string, int> kinds;  // for COMMITLOG_POWER_LOSS_VERBOSE
    for (CrashMode mode : testing::kAllCrashModes) {
      const bool random = mode == CrashMode::kTear || mode == CrashMode::kRandom;
      for (uint64_t image = 0; image < (random ? 6 : 1); ++image) {
        const std::string crash_mode = testing::crash_mode_name(mode);
        CAPTURE(crash_mode);
        CAPTURE(image);
        auto crashed = fs.crash(mode, mix(seed + 1 + image));
        check_periodic_image(*crashed, appended, synced, kinds);
      }
    }
    if (std::getenv("COMMITLOG_POWER_LOSS_VERBOSE") != nullptr) {
      std::string seen;
      for (const auto& [kind, n] : kinds) seen += "; " + std::to_string(n) + "x " + kind;
      std::printf("periodic seed %llu: %llu appended, %llu synced%s\n",
                  static_cast<unsigned long long>(seed), static_cast<unsigned long long>(appended),
                  static_cast<unsigned long long>(synced), seen.c_str());
    }
  }
}

}  // namespace
}  // namespace commitlog
