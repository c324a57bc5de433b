// SPDX-License-Identifier: Apache-2.0
// The key-value table: an in-memory map fed by the commit log.
//
// Ordering. The table is split into kShards shards by key hash, each with a
// fiber mutex. A write locks the shards of its keys (in index order), appends
// its mutation to the log, applies it to the map and unlocks. So the writes
// to one key reach the map in the order of their log positions, and a replay
// in log order rebuilds the same map. INCR reads and writes under the lock,
// so concurrent increments never read the same value.
//
// Durability. Under a policy that acknowledges only durable writes (batch,
// group, adaptive: PolicyPromise), the append does not wait under the lock
// (AppendWait::kNothing): a lock held through a flush would let only one
// write per flush reach a hot key. The write records in a DurableFence the
// position its acknowledgement needs, and every read records its shard's
// newest such write (last_write; waiting for it costs nothing once it is
// durable). The connection waits for its fence before it sends the replies:
// nothing it answers -- an +OK, a value, a "no such key" after a DEL -- can
// be lost by a crash afterwards. Under periodic the append follows the
// policy (its lag_block back-pressure included) and nothing waits: writes
// are acknowledged before they are durable, as the policy says.
//
// Thread-safety: every member may be called from any fiber or thread, except
// load() and apply_replayed(), which run before serving starts.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <boost/fiber/mutex.hpp>

#include "commitlog/commit_log.h"

namespace commitlog::kv {

// The newest log position the replies gathered so far depend on.
class DurableFence {
 public:
  void need(Position position) {
    if (!position_ || *position_ < position) position_ = position;
  }
  const std::optional<Position>& position() const { return position_; }
  void clear() { position_.reset(); }

 private:
  std::optional<Position> position_;
};

// The table as of a snapshot marker: every mutation before `position` and
// none after it.
struct TableImage {
  Position position;
  std::vector<std::pair<std::string, std::string>> entries;
};

class KvStore {
 public:
  static constexpr size_t kShards = 64;

  KvStore() = default;
  KvStore(const KvStore&) = delete;
  KvStore& operator=(const KvStore&) = delete;

  // The log that writes go to. Set before serving.
  void attach(CommitLog* log) {
    log_ = log;
    wait_later_ = log->policy_promise().acknowledges_durable;
  }

  // Writes. An error is the log's (refused, closed, failed): nothing changed.
  // `keys_and_values` alternates key, value; later pairs win.
  [[nodiscard]] Status set(std::span<const std::string_view> keys_and_values, DurableFence& fence);
  // How many of `keys` existed.
  [[nodiscard]] Result<int64_t> del(std::span<const std::string_view> keys, DurableFence& fence);
  // The new value; kInvalidArgument when the value is not a 64-bit integer
  // or the increment would overflow.
  [[nodiscard]] Result<int64_t> incr(std::string_view key, DurableFence& fence);

  // Reads.
  std::optional<std::string> get(std::string_view key, DurableFence& fence);
  int64_t exists(std::span<const std::string_view> keys, DurableFence& fence);
  size_t size(DurableFence& fence);

  // Startup, before serving: an entry of the snapshot, then each replayed
  // mutation in log order.
  void load(std::string_view key, std::string_view value);
  [[nodiscard]] Status apply_replayed(std::span<const std::byte> payload);

  // Appends snapshot marker `number` while every shard is locked, and copies
  // the table as of that marker (each shard is released once copied).
  [[nodiscard]] Result<TableImage> capture(uint64_t number);

  // Writes applied since start (a snapshot is skipped when it has not moved).
  uint64_t writes() const { return writes_.load(std::memory_order_relaxed); }
  // Bytes of keys and values held, approximately.
  uint64_t bytes() const { return bytes_.load(std::memory_order_relaxed); }

 private:
  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  struct alignas(64) Shard {
    boost::fibers::mutex mu;
    std::unordered_map<std::string, std::string, StringHash, std::equal_to<>> map;  // guarded by mu
    std::optional<Position>
        last_write;  // newest write acknowledged only once durable; guarded by mu
  };
  using ShardMask = uint64_t;
  static_assert(kShards <= 64, "a ShardMask holds one bit per shard");

  static size_t shard_of(std::string_view key);
  void lock(ShardMask mask);
  void unlock(ShardMask mask);
  // Appends `payload`; on success records the write in the shards of `mask`
  // and in `fence`. Callers hold the locks of `mask`.
  [[nodiscard]] Result<Position> append(std::string_view payload, ShardMask mask,
                                        DurableFence& fence);
  void read_fence(const Shard& shard, DurableFence& fence) const;
  void put(Shard& shard, std::string_view key, std::string_view value);
  bool erase(Shard& shard, std::string_view key);

  CommitLog* log_ = nullptr;
  bool wait_later_ = false;  // append without waiting, and fence the position
  std::array<Shard, kShards> shards_;
  std::atomic<uint64_t> writes_{0};
  std::atomic<uint64_t> bytes_{0};
};

}  // namespace commitlog::kv
