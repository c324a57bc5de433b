// SPDX-License-Identifier: Apache-2.0
// Keeps the commit log discarded up to what RocksDB has made durable, and
// asks RocksDB to flush when the log is over its space limit (Cassandra's
// way: the log never waits on the engine, the engine's flush frees the log).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "commitlog/commit_log.h"
#include "tools/kv/engine.h"

namespace commitlog::kv {

class LogDiscarder {
 public:
  // What INFO reports (kv_flush_requests and the kv_* lines after it).
  struct Report {
    uint64_t flush_requests = 0;
    std::optional<Position> flushed;    // the newest checkpoint RocksDB made durable
    uint64_t discards = 0;
    std::optional<Position> discarded;  // the newest the log was discarded to
    std::string last_error;             // of a flush or a discard; empty: none
  };

  LogDiscarder() = default;
  ~LogDiscarder();  // stop()
  LogDiscarder(const LogDiscarder&) = delete;
  LogDiscarder& operator=(const LogDiscarder&) = delete;

  // The log is over its limit (the log's on_flush_request, on its thread):
  // wakes the flusher, never blocks.
  void request_flush();
  // RocksDB flushed everything up to `checkpoint` (its flush thread):
  // discards the log up to it once a log is attached, else remembers it.
  void flushed(Position checkpoint);
  // `log`, open, from now on; it is discarded at once up to the newest
  // checkpoint flushed so far, or else up to `covered` (what RocksDB held
  // when the log was replayed). `log` outlives this object's use of it.
  void attach(CommitLog* log, std::optional<Position> covered);
  // Starts the flusher, which flushes `engine` (outliving stop()) on request.
  void start(Engine& engine);
  // Stops the flusher: a flush under way ends first. Idempotent.
  void stop();
  // Waits up to `timeout` for a discard up to at least `checkpoint`; false
  // if none came.
  bool wait_discarded(Position checkpoint, std::chrono::milliseconds timeout);
  Report report() const;

 private:
  void flush_loop(Engine& engine);
  void note_error(const std::string& what, const Status& s);  // with mu_ held

  std::atomic<CommitLog*> log_{nullptr};
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;         // guarded by mu_
  bool flush_requested_ = false;  // guarded by mu_
  Report report_;                 // guarded by mu_
  std::thread thread_;
};

}  // namespace commitlog::kv
