// SPDX-License-Identifier: Apache-2.0
// commitlog-kv: RocksDB (its WAL off) behind the commit log, and the threads
// that serve clients.
//
// Threads:
//   `threads` workers, each with an EpollScheduler: an acceptor fiber (all
//     share one listening socket, listener.h) and one fiber per connection;
//     the thread waits for durability once per round (durability.h);
//   with --timeout, the reaper of idle clients (client_limits.h);
//   the flusher: when the log is over commitlog_total_space it asks RocksDB
//     to flush its memtables (blocking I/O stays off the workers);
//   RocksDB's own threads: after each flush its listener discards the log up
//     to the checkpoint the flush made durable (engine.h);
//   the commit log's own threads (the only fsyncs of writes; in the
//     reference setting the workers sync RocksDB's WAL themselves);
//   the main thread, waiting for SIGINT or SIGTERM (SHUTDOWN raises SIGTERM).
//
// Start: check the options, the directories and the port; lock the log's
// directory (kBusy when another server or log holds it); open RocksDB; replay
// the log after RocksDB's checkpoint; open the log; serve. Stop: flush
// RocksDB (the log is then discarded up to its end), close the log.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "commitlog/commit_log.h"
#include "commitlog/replayer.h"
#include "tools/kv/auth.h"
#include "tools/kv/client_limits.h"
#include "tools/kv/commands.h"
#include "tools/kv/connection.h"
#include "tools/kv/engine.h"
#include "tools/kv/kv_store.h"
#include "tools/kv/listener.h"

namespace commitlog::kv {

struct ServerOptions {
  Options log;  // its directory is replaced by <dir>/commitlog
  std::string policy_origin;  // why log.sync_policy: "--policy", "FILE:LINE", a default
  std::string dir = "data";  // RocksDB in <dir>/rocksdb, the log in <dir>/commitlog
  std::string bind = "127.0.0.1";
  int port = 6380;  // 0: any free port (the ready line names it)
  int threads = 1;  // workers; one leaves the second core to the log and the clients
  uint64_t memtable_bytes = 64 << 20;  // RocksDB's write_buffer_size
  // The reference setting: no commit log, RocksDB's own WAL synced once per
  // worker round (DB::SyncWAL), for comparisons.
  bool reference_rocksdb_wal = false;
  RecoveryMode recovery = RecoveryMode::kTolerateTornTail;
  std::string password;  // empty: none required
  bool protected_mode = true;
  ClientLimits clients;
  // The largest request a client may send (client-query-buffer-limit); 0:
  // the largest the log takes, max_mutation_size plus 1MiB for the rest.
  uint64_t query_buffer_limit = 0;
};

class Server {
 public:
  explicit Server(ServerOptions options);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Checks, opens, replays and listens; prints what it did.
  [[nodiscard]] Status start();
  // start() failed on bad options, directories or port, before any replay.
  bool bad_input() const { return bad_input_; }
  // Serves until SIGINT or SIGTERM (which the caller has blocked in every
  // thread), then stops. Returns the exit code.
  int run();

 private:
  struct StartupReport {
    std::optional<Position> checkpoint;
    uint64_t replayed = 0;
    uint64_t skipped = 0;  // already in RocksDB
    uint64_t replay_segments = 0;
    uint64_t torn_tail_bytes = 0;
    uint64_t corruptions = 0;
    double replay_ms = 0;
  };

  Status check_input(const Options& log_options);
  Status open_engine();
  Status replay();
  void worker();
  void flush_loop();
  // RocksDB flushed up to `checkpoint` (its flush thread).
  void flushed(Position checkpoint);
  std::string info(std::span<const std::string_view> sections);
  std::string info_persistence();
  double ms_since_start() const {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started_at_).count();
  }
  std::vector<std::pair<std::string, std::string>> config() const;

  ServerOptions options_;
  std::string log_dir_;
  std::string engine_dir_;
  std::string policy_name_;
  Duration max_hold_{};  // ThreadDurability's bound on holding a round open
  KvStore store_;
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<CommitLog> log_;
  std::atomic<CommitLog*> open_log_{nullptr};  // log_ once open, for RocksDB's threads
  ServerHooks hooks_;
  ServerCounters counters_;
  Auth auth_;
  std::unique_ptr<ClientRegistry> clients_;
  std::unique_ptr<ConnectionEnv> env_;
  StartupReport startup_;
  bool bad_input_ = false;
  Listener listener_;
  std::chrono::steady_clock::time_point started_at_;

  std::mutex flush_mu_;
  std::condition_variable flush_cv_;
  bool stopping_ = false;         // guarded by flush_mu_
  bool flush_requested_ = false;  // guarded by flush_mu_
  uint64_t flush_requests_ = 0;   // guarded by flush_mu_
  std::string last_error_;        // guarded by flush_mu_
  std::optional<Position> flushed_;   // newest checkpoint RocksDB made durable; guarded by flush_mu_
  std::optional<Position> discarded_; // newest the log was discarded to; guarded by flush_mu_
  uint64_t discards_ = 0;             // guarded by flush_mu_
  std::thread flush_thread_;
  std::vector<std::thread> workers_;
};

}  // namespace commitlog::kv
