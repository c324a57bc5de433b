// SPDX-License-Identifier: Apache-2.0
// The `rocksdb` reference: Put with WriteOptions.sync = true, a 16-byte key
// (producer and sequence, big-endian) and the payload as the value, on a
// default-configured DB from Debian's librocksdb-dev. RocksDB groups
// concurrent sync writes itself (a leader writes and syncs the WAL for the
// whole write group); the WAL_FILE_SYNCED ticker counts its syncs.
//
// A waiting Put blocks its thread (RocksDB waits on its own mutexes and
// condition variables), so fibers add no concurrency to this engine.
#include "tools/lab/bench_engines.h"

#if COMMITLOG_HAVE_ROCKSDB

#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/statistics.h>

#include <array>

namespace commitlog::tools {
namespace {

void store_big_endian(char* p, uint64_t v) {
  for (int i = 7; i >= 0; --i, v >>= 8) p[i] = static_cast<char>(v & 0xff);
}

Status to_status(const rocksdb::Status& s, const std::string& what) {
  return Status::io_error("rocksdb " + what + ": " + s.ToString());
}

class RocksDbEngine final : public BenchEngine {
 public:
  RocksDbEngine(std::unique_ptr<rocksdb::DB> db, std::shared_ptr<rocksdb::Statistics> statistics)
      : db_(std::move(db)), statistics_(std::move(statistics)) {
    options_.sync = true;
  }
  ~RocksDbEngine() override { close().ignore(); }

  Status append(uint64_t producer, uint64_t seq, std::span<const std::byte> payload) override {
    std::array<char, 16> key{};
    store_big_endian(key.data(), producer);
    store_big_endian(key.data() + 8, seq);
    const rocksdb::Slice value(reinterpret_cast<const char*>(payload.data()), payload.size());
    rocksdb::Status s = db_->Put(options_, rocksdb::Slice(key.data(), key.size()), value);
    return s.ok() ? Status{} : to_status(s, "Put");
  }

  uint64_t syncs() const override { return statistics_->getTickerCount(rocksdb::WAL_FILE_SYNCED); }
  bool suspends_fibers() const override { return false; }

  Status close() override {
    if (!db_) return {};
    rocksdb::Status s = db_->Close();
    db_.reset();
    return s.ok() ? Status{} : to_status(s, "Close");
  }

 private:
  std::unique_ptr<rocksdb::DB> db_;
  std::shared_ptr<rocksdb::Statistics> statistics_;
  rocksdb::WriteOptions options_;
};

}  // namespace

Result<std::unique_ptr<BenchEngine>> open_rocksdb_engine(const EngineSetup& setup) {
  rocksdb::Options options;
  options.create_if_missing = true;
  options.error_if_exists = true;
  auto statistics = rocksdb::CreateDBStatistics();
  statistics->set_stats_level(rocksdb::StatsLevel::kExceptTimers);
  options.statistics = statistics;
  rocksdb::DB* db = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(options, setup.directory + "/rocksdb", &db);
  if (!s.ok()) return to_status(s, "Open");
  return std::unique_ptr<BenchEngine>(
      new RocksDbEngine(std::unique_ptr<rocksdb::DB>(db), std::move(statistics)));
}

}  // namespace commitlog::tools

#else  // !COMMITLOG_HAVE_ROCKSDB

namespace commitlog::tools {

Result<std::unique_ptr<BenchEngine>> open_rocksdb_engine(const EngineSetup&) {
  return Status::not_supported(
      "the rocksdb engine is absent: librocksdb-dev was not found when this binary was configured");
}

}  // namespace commitlog::tools

#endif
