// SPDX-License-Identifier: Apache-2.0
// The store's data from start to stop: RocksDB (its WAL off) behind the
// commit log. Opening locks the log's directory, opens RocksDB, replays the
// log after RocksDB's checkpoint, flushes what was replayed, opens the log
// and discards what RocksDB holds; closing flushes RocksDB, waits for the
// discard that follows and closes the log. In the reference setting there is
// no log: RocksDB's own WAL, synced once per worker round.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "commitlog/commit_log.h"
#include "tools/kv/durability.h"
#include "tools/kv/engine.h"
#include "tools/kv/kv_store.h"
#include "tools/kv/log_discarder.h"
#include "tools/kv/server_options.h"

namespace commitlog::kv {

// What the start found and did, for the start's lines and INFO.
struct StartupReport {
  std::optional<Position> checkpoint;  // RocksDB's, before the replay
  uint64_t replayed = 0;
  uint64_t skipped = 0;  // already in RocksDB
  uint64_t replay_segments = 0;
  uint64_t torn_tail_bytes = 0;
  uint64_t corruptions = 0;
  double replay_ms = 0;
};

// RocksDB's write_buffer_size: `options.memtable_bytes`, but under a
// commitlog_total_space at most a quarter of it (and at least 64 KiB), so
// that RocksDB flushes by itself before the log is over its space and the
// log's flush requests stay the exception.
uint64_t memtable_bytes_used(const ServerOptions& options);

// Not thread-safe, but for what it hands out: store() (KvStore's contract),
// log() and engine() (theirs), report calls from any thread.
class StoreLifecycle {
 public:
  // `options` outlives this object.
  explicit StoreLifecycle(const ServerOptions& options);
  ~StoreLifecycle();  // stops the flusher; flushes nothing (close() does)
  StoreLifecycle(const StoreLifecycle&) = delete;
  StoreLifecycle& operator=(const StoreLifecycle&) = delete;

  // The log's options: ServerOptions::log with its directory under --dir
  // and its flush requests sent to RocksDB.
  Options log_options();
  // Opens everything (see above) and starts the flusher. A failure leaves
  // nothing to close; the lock on the log's directory is let go.
  [[nodiscard]] Status open(const Options& log_options);
  // Flushes RocksDB, waits (up to 10 s) for the log's discard up to it, and
  // closes the log: false if any of it failed (each failure printed).
  bool close();

  KvStore& store() { return store_; }
  Engine& engine() { return *engine_; }
  CommitLog* log() const { return log_.get(); }  // null in the reference setting
  const std::string& log_dir() const { return log_dir_; }
  const std::string& engine_dir() const { return engine_dir_; }
  const StartupReport& startup() const { return startup_; }
  LogDiscarder::Report discards() const { return discarder_.report(); }
  // What a worker's round waits on: the log's durability, or a sync of
  // RocksDB's WAL; and how long a round may be held open (the policy's
  // bound on the delay it adds).
  WaitDurable wait_durable() const;
  Duration max_hold() const { return max_hold_; }

 private:
  Status open_engine();
  Status replay();

  const ServerOptions& options_;
  const std::string log_dir_;
  const std::string engine_dir_;
  KvStore store_;
  LogDiscarder discarder_;
  std::unique_ptr<CommitLog> log_;
  std::unique_ptr<Engine> engine_;  // after log_: RocksDB's threads, which discard, end first
  StartupReport startup_;
  Duration max_hold_{};
};

}  // namespace commitlog::kv
