// SPDX-License-Identifier: Apache-2.0
// The commitlog engine, and the dispatch by engine name.
#include "tools/lab/bench_engines.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <memory>
#include <random>

#include "commitlog/commit_log.h"

namespace commitlog::tools {
namespace {

constexpr uint32_t kTables = 16;
// One random master key for the whole run, when no --key-file gives one:
// the bench measures the cipher, not key management.
class RunKeys final : public KeyProvider {
 public:
  RunKeys() {
    std::random_device random;
    for (std::byte& b : key_) b = static_cast<std::byte>(random());
  }
  uint32_t active_key_id() const override { return 1; }
  Result<MasterKey> key(uint32_t id) const override {
    if (id != 1) return Status::not_found("the bench's key is 1, not " + std::to_string(id));
    return key_;
  }
  std::vector<uint32_t> key_ids() const override { return {1}; }
  std::string source() const override { return "the bench's random key"; }

 private:
  MasterKey key_{};
};

std::shared_ptr<const KeyProvider> run_keys() {
  static const auto keys = std::make_shared<const RunKeys>();
  return keys;
}

class CommitLogEngine final : public BenchEngine {
 public:
  CommitLogEngine(std::unique_ptr<CommitLog> log, bool durable, bool discards)
      : log_(std::move(log)), durable_(durable), discards_(discards) {}

  Status append(uint64_t producer, uint64_t, std::span<const std::byte> payload) override {
    auto position = log_->append(static_cast<uint32_t>(producer % kTables), payload);
    if (!position.ok()) return position.status();
    if (discards_) return discard_on_switch(*position);
    return {};
  }
  uint64_t syncs() const override { return log_->stats().flushes; }
  FlushedBytes flushed_bytes() const override {
    const CommitLogStats stats = log_->stats();
    return {stats.image_bytes, stats.file_bytes};
  }
  bool durable() const override { return durable_; }
  Status close() override { return log_->close(); }

 private:
  // The first append seen in a segment discards every table up to it, so
  // each segment before it becomes clean once finished.
  Status discard_on_switch(Position position) {
    uint64_t seen = segment_.load(std::memory_order_relaxed);
    if (position.segment <= seen || !segment_.compare_exchange_strong(seen, position.segment)) return {};
    for (uint32_t table = 0; table < kTables; ++table) CL_RETURN_IF_ERROR(log_->discard(table, position));
    return {};
  }

  std::unique_ptr<CommitLog> log_;
  const bool durable_;
  const bool discards_;
  std::atomic<uint64_t> segment_{0};
};

}  // namespace

std::string EngineSpec::policy_label() const {
  if (engine != "commitlog") return "";
  return window_text.empty() ? policy : policy + ":" + window_text;
}

std::string EngineSpec::label() const {
  if (engine != "commitlog") return engine;
  return engine + " " + policy_label() + (large_path.empty() ? "" : " " + large_path) +
         (compression.empty() ? "" : " " + compression) + (encryption.empty() ? "" : " " + encryption) +
         (access_mode.empty() ? "" : " " + access_mode) + (segments.empty() ? "" : " " + segments + " segments");
}

bool engine_available(const std::string& engine) {
  const std::vector<std::string> names = available_engines();
  return std::find(names.begin(), names.end(), engine) != names.end();
}

std::vector<std::string> available_engines() {
#if COMMITLOG_HAVE_ROCKSDB
  return {"commitlog", "raw", "raw-overwrite", "raw-direct", "raw-direct-fdatasync", "rocksdb"};
#else
  return {"commitlog", "raw", "raw-overwrite", "raw-direct", "raw-direct-fdatasync"};
#endif
}

Result<std::unique_ptr<BenchEngine>> open_engine(const EngineSpec& spec, const EngineSetup& setup) {
  if (spec.engine == "commitlog") return open_commitlog_engine(spec, setup);
  if (spec.engine == "raw") return open_raw_engine(setup, /*prewritten=*/false);
  if (spec.engine == "raw-overwrite") return open_raw_engine(setup, /*prewritten=*/true);
  if (spec.engine == "raw-direct") return open_raw_direct_engine(setup, /*fdatasync=*/false);
  if (spec.engine == "raw-direct-fdatasync")
    return open_raw_direct_engine(setup, /*fdatasync=*/true);
  if (spec.engine == "rocksdb") return open_rocksdb_engine(setup);
  return Status::invalid_argument("unknown engine '" + spec.engine + "'");
}

Options commitlog_engine_options(const EngineSpec& spec, const EngineSetup& setup) {
  Options options = setup.base;
  options.directory = setup.directory;
  options.sync_policy = spec.policy;
  if (spec.window > Duration::zero()) {
    if (spec.policy == "periodic") {
      options.policy.sync_period = spec.window;
    } else if (spec.policy == "adaptive") {
      options.policy.latency_cap = spec.window;
    } else {
      options.policy.group_window = spec.window;
    }
  }
  // Room for at least 32 records per segment, as 32 MiB segments give 1 MiB ones.
  options.segment_size = std::max(options.segment_size, std::bit_ceil(setup.record_size * 32));
  options.max_mutation_size = std::max(options.effective_max_mutation_size(), setup.record_size);
  if (spec.compression == "none") options.compression = Compression::kNone;
  if (spec.compression == "lz4") options.compression = Compression::kLz4;
  if (spec.encryption == "none") options.encryption = nullptr;
  if (spec.encryption == "aes" && options.encryption == nullptr) options.encryption = run_keys();
  if (spec.large_path == "pooled") options.direct_write_threshold = 0;
  if (spec.large_path == "direct") {
    options.direct_write_threshold = std::max(kMinDirectWriteThreshold, setup.record_size);
  }
  for (const auto& [name, mode] : kDiskAccessModes) {
    if (spec.access_mode == name) options.disk_access_mode = mode;
  }
  return options;
}

Result<std::unique_ptr<BenchEngine>> open_commitlog_engine(const EngineSpec& spec,
                                                           const EngineSetup& setup) {
  auto log = CommitLog::open(commitlog_engine_options(spec, setup));
  if (!log.ok()) return log.status();
  return std::unique_ptr<BenchEngine>(
      new CommitLogEngine(std::move(log).value(), spec.policy != "periodic", spec.segments != "new"));
}

}  // namespace commitlog::tools
