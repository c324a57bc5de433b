// SPDX-License-Identifier: Apache-2.0
// The store's data in RocksDB, with RocksDB's WAL off: the commit log is the
// write-ahead log (docs/kv.md).
//
// Every apply() is one WriteBatch: the puts and deletes of one log mutation
// and the checkpoint key set to that mutation's position (value.h). Applies
// happen in log order (the store serializes them), so a memtable holds a
// prefix of the log, and the checkpoint it holds names that prefix's end.
// When RocksDB has flushed memtables to an SST file, the listener reads the
// checkpoint from that file and reports it (on_flushed): everything up to it
// is durable in RocksDB and the log may be discarded up to it. On open, the
// checkpoint read back is where the replay starts.
//
// The reference mode (own_wal) turns RocksDB's WAL on and writes no
// checkpoint: the same server with RocksDB's own durability, for comparison.
// Its writes go to the WAL with sync = false and are made durable in groups,
// as the log's are: a worker's round (durability.h) ends in one sync_wal().
// There `at` numbers the writes in apply order (segment 0, offset n for the
// n-th) for sync_wal(), which also waits for a write another thread is still
// applying.
//
// Expired values are dropped by a compaction filter (value.h holds expiry).
//
// Thread-safety: every member from any thread; apply() calls are ordered
// by the caller.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "commitlog/position.h"
#include "commitlog/status.h"

namespace rocksdb {
class DB;
class CompactionFilter;
}  // namespace rocksdb

namespace commitlog::kv {

struct EngineOptions {
  std::string path;                     // RocksDB's directory
  uint64_t memtable_bytes = 64 << 20;   // write_buffer_size
  bool own_wal = false;                 // the reference mode: RocksDB's WAL, synced by sync_wal()
  std::function<int64_t()> now_ms;      // wall clock for the compaction filter
  std::function<void(Position)> on_flushed;  // from RocksDB's flush thread
};

// One change of a WriteBatch; `key` is the user's key.
struct EngineWrite {
  enum class Kind : uint8_t { kPut, kDelete, kClear } kind = Kind::kPut;
  std::string key;
  std::string value;  // stored value (value.h), for kPut
};

class Engine {
 public:
  [[nodiscard]] static Result<std::unique_ptr<Engine>> open(EngineOptions options);
  ~Engine();  // flushes nothing: call flush() first to keep the memtables
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // The checkpoint of the newest applied mutation (nullopt: none yet).
  [[nodiscard]] Result<std::optional<Position>> checkpoint();
  // One WriteBatch; `at` is the log position (nullopt: no checkpoint), or
  // in the reference mode the write's number (nullopt: none to wait for).
  [[nodiscard]] Status apply(std::span<const EngineWrite> writes, std::optional<Position> at);
  // The reference mode: blocks the calling thread until the write numbered
  // `at` has been applied (done or failed) and RocksDB's WAL is synced
  // (DB::SyncWAL), which makes it and every earlier write durable.
  [[nodiscard]] Status sync_wal(Position at);
  uint64_t wal_syncs() const { return wal_syncs_.load(std::memory_order_relaxed); }
  // The stored value of `key` (nullopt: absent).
  [[nodiscard]] Result<std::optional<std::string>> get(std::string_view key);
  // Calls `each(key, stored)` in key order from the first key > `*after`
  // (nullopt: from the start, the empty key included) while it returns true.
  [[nodiscard]] Status scan(std::optional<std::string_view> after,
                            const std::function<bool(std::string_view, std::string_view)>& each);
  // Flushes the memtables (waits); the listener then reports the checkpoint.
  [[nodiscard]] Status flush();
  // A RocksDB property as an integer (0 when unknown).
  uint64_t property(const std::string& name);
  const std::string& path() const { return options_.path; }
  bool own_wal() const { return options_.own_wal; }
  uint64_t flushes() const;
  uint64_t memtable_bytes() const { return options_.memtable_bytes; }

 private:
  explicit Engine(EngineOptions options);
  class Listener;
  EngineOptions options_;
  std::unique_ptr<rocksdb::CompactionFilter> filter_;
  std::shared_ptr<Listener> listener_;
  std::unique_ptr<rocksdb::DB> db_;
  std::atomic<uint64_t> applied_{0};  // the reference mode: the newest write number applied
  std::atomic<uint64_t> wal_syncs_{0};
};

}  // namespace commitlog::kv
