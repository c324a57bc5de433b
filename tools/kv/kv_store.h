// SPDX-License-Identifier: Apache-2.0
// The key-value table: RocksDB (engine.h) behind the commit log.
//
// A write command reads what it needs, computes the result, appends it to
// the log as one mutation (mutation.h: results, never operations), and
// applies it to RocksDB in one WriteBatch with the mutation's position as the
// checkpoint. One fiber mutex orders the writes: each appends and applies
// before the next reads, so a read-modify-write (INCR, SET NX) sees every
// earlier write, RocksDB receives the mutations in log order, and the
// checkpoint only grows.
//
// Durability. Under a policy that acknowledges only durable writes (batch,
// group, adaptive: PolicyPromise), the append does not wait under the mutex
// (AppendWait::kNothing): the write records in its DurableFence the position
// its acknowledgement needs, and every read records the newest such write
// (waiting for it costs nothing once it is durable). The connection waits
// for its fence before it sends the replies. Under periodic the append
// follows the policy and nothing waits. Without a log (the reference mode)
// the writes go to RocksDB's own WAL unsynced, numbered in apply order, and
// are fenced the same way: the wait syncs the WAL (Engine::sync_wal()).
//
// Expiry: values carry their expiry (value.h); an expired key is never
// returned, is deleted by the next read that meets it (from RocksDB only:
// replaying the put again is harmless, it stays expired) and by the
// compaction filter.
//
// Thread-safety: every member from any fiber or thread, except
// apply_replayed(), which runs before serving starts.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <boost/fiber/mutex.hpp>

#include "commitlog/commit_log.h"
#include "tools/kv/engine.h"

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

struct SetOptions {
  enum class When : uint8_t { kAlways, kIfAbsent, kIfPresent } when = When::kAlways;  // NX, XX
  bool get = false;                      // GET: reply with the old value
  std::optional<int64_t> expire_at_ms;   // EX/PX/EXAT/PXAT
  bool keep_ttl = false;                 // KEEPTTL
};

// EXPIRE's conditions (Redis 7), on the key's current expiry, none
// counting as infinite: NX none, XX one, GT the new one later, LT earlier.
struct ExpireIf {
  bool nx = false, xx = false, gt = false, lt = false;
};

struct SetResult {
  bool written = false;
  std::optional<std::string> old;  // with SetOptions::get
};

class KvStore {
 public:
  // `now_ms`: the wall clock, in ms since the epoch.
  explicit KvStore(std::function<int64_t()> now_ms);
  KvStore(const KvStore&) = delete;
  KvStore& operator=(const KvStore&) = delete;

  // Set before serving. `log` is null in the reference mode (and before
  // the log is open).
  void attach(Engine* engine, CommitLog* log) {
    engine_ = engine;
    log_ = log;
    wait_later_ = log != nullptr ? log->policy_promise().acknowledges_durable : engine->own_wal();
  }

  // Writes. An error is the log's or RocksDB's; kInvalidArgument a refused
  // argument (nothing changed).
  [[nodiscard]] Result<SetResult> set(std::string_view key, std::string_view value,
                                      const SetOptions& options, DurableFence& fence);
  [[nodiscard]] Status mset(std::span<const std::string_view> keys_and_values, DurableFence& fence);
  [[nodiscard]] Result<int64_t> del(std::span<const std::string_view> keys, DurableFence& fence);
  [[nodiscard]] Result<std::optional<std::string>> getdel(std::string_view key, DurableFence& fence);
  [[nodiscard]] Result<int64_t> incr_by(std::string_view key, int64_t delta, DurableFence& fence);
  // The new length.
  [[nodiscard]] Result<int64_t> append(std::string_view key, std::string_view value,
                                       DurableFence& fence);
  // Sets (or, with nullopt, removes) the expiry of an existing key; false
  // when there is no such key, a condition of `only_if` fails, or (for
  // nullopt) there is no expiry to remove.
  [[nodiscard]] Result<bool> expire_at(std::string_view key, std::optional<int64_t> at_ms,
                                       DurableFence& fence, const ExpireIf& only_if = {});
  [[nodiscard]] Status flushall(DurableFence& fence);

  // Reads.
  [[nodiscard]] Result<std::optional<std::string>> get(std::string_view key, DurableFence& fence);
  // ms left; -1: no expiry; -2: no such key.
  [[nodiscard]] Result<int64_t> pttl(std::string_view key, DurableFence& fence);
  [[nodiscard]] Result<int64_t> exists(std::span<const std::string_view> keys, DurableFence& fence);
  // Up to `count` live keys after cursor `cursor` (0: the start) that match
  // `pattern` (nullopt: all); returns the next cursor (0: done).
  // kInvalidArgument for a cursor this process did not hand out (or forgot):
  // the numbers of each run start at a random point, so one of an earlier
  // run is refused rather than resumed from another client's position.
  [[nodiscard]] Result<uint64_t> scan(uint64_t cursor, std::optional<std::string_view> pattern,
                                      uint64_t count, std::vector<std::string>* keys,
                                      DurableFence& fence);
  // The live keys, and of them those with an expiry (INFO's `expires`).
  struct KeyCount {
    uint64_t keys = 0;
    uint64_t expiring = 0;
  };
  [[nodiscard]] Result<KeyCount> count_keys(DurableFence& fence);
  // WAITAOF: every write so far durable once `fence` is (or, when the policy
  // does not fence, after a sync of the log).
  [[nodiscard]] Status durable_all(DurableFence& fence);

  // Startup: one replayed mutation at `position`.
  [[nodiscard]] Status apply_replayed(std::span<const std::byte> payload, Position position);

  uint64_t writes() const { return writes_.load(std::memory_order_relaxed); }
  // A write failed in the log or in RocksDB (INFO's aof_last_write_status).
  bool failed() const { return failed_.load(std::memory_order_relaxed); }
  int64_t now_ms() const { return now_ms_(); }

 private:
  // Appends the writes as one mutation and applies them. Holds mu_.
  [[nodiscard]] Status commit(std::span<const EngineWrite> writes, DurableFence& fence);
  // The live stored value of `key` (expired: nullopt, and removed).
  [[nodiscard]] Result<std::optional<std::string>> live(std::string_view key, bool locked);
  void read_fence(DurableFence& fence);

  std::function<int64_t()> now_ms_;
  Engine* engine_ = nullptr;
  CommitLog* log_ = nullptr;
  bool wait_later_ = false;
  boost::fibers::mutex mu_;  // orders writes: read, append, apply
  uint64_t wal_writes_ = 0;  // the reference mode: writes numbered so far; guarded by mu_
  std::mutex last_mu_;
  std::optional<Position> last_write_;  // guarded by last_mu_
  std::mutex cursor_mu_;
  std::map<uint64_t, std::string> cursors_;  // SCAN cursor -> last key returned; guarded by cursor_mu_
  uint64_t next_cursor_;                     // guarded by cursor_mu_
  uint64_t cursor_bytes_ = 0;                // of the keys in cursors_; guarded by cursor_mu_
  std::atomic<uint64_t> writes_{0};
  std::atomic<bool> failed_{false};
};

}  // namespace commitlog::kv
