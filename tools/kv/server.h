// SPDX-License-Identifier: Apache-2.0
// commitlog-kv: the in-memory table, its commit log and snapshots, and the
// threads that serve clients.
//
// Threads:
//   `threads` workers, each with an EpollScheduler: an acceptor fiber (all
//     share one listening socket, listener.h) and one fiber per connection;
//     the thread waits for durability once per round (durability.h);
//   with --timeout, the reaper of idle clients (client_limits.h);
//   the snapshotter: every interval, a snapshot of the table, then the log
//     discarded up to it (blocking file I/O stays off the workers);
//   the commit log's own threads (the only fsyncs of writes);
//   the main thread, waiting for SIGINT or SIGTERM.
//
// Start: lock the log's directory (kBusy when another server or log holds
// it), load the newest snapshot, replay the log from its marker, open the
// log, listen. Stop: a last snapshot, close the log (flushing it).
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
#include "tools/kv/connection.h"
#include "tools/kv/durability.h"
#include "tools/kv/kv_store.h"
#include "tools/kv/listener.h"

namespace commitlog::kv {

struct ServerOptions {
  Options log;  // its directory is replaced by <dir>/commitlog
  std::string policy_origin;  // why log.sync_policy: "--policy", "FILE:LINE", a default
  std::string dir = "data";  // snapshots here, the log in <dir>/commitlog
  std::string bind = "127.0.0.1";
  int port = 6380;  // 0: any free port (the ready line names it)
  int threads = 1;  // workers; one leaves the second core to the log and the clients
  // 0: only at shutdown, or when the log is over commitlog_total_space.
  std::chrono::milliseconds snapshot_interval{60'000};
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

  // Loads, replays, opens the log and listens; prints what it did.
  [[nodiscard]] Status start();
  // Serves until SIGINT or SIGTERM (which the caller has blocked in every
  // thread), then stops. Returns the exit code.
  int run();

 private:
  struct StartupReport {
    std::string snapshot_path;
    uint64_t snapshot_keys = 0;
    double snapshot_ms = 0;
    uint64_t replayed = 0;
    uint64_t replay_segments = 0;
    uint64_t torn_tail_bytes = 0;
    uint64_t corruptions = 0;
    double replay_ms = 0;
  };
  struct SnapshotState {  // guarded by snapshot_mu_
    uint64_t count = 0;
    std::optional<Position> position;
    uint64_t keys = 0;
    double ms = 0;
    uint64_t discards = 0;
    std::string last_error;
    uint64_t writes_covered = 0;
    bool due = false;        // a snapshot is owed even without new writes (after a replay)
    bool requested = false;  // the log asked for one now (over commitlog_total_space)
    uint64_t flush_requests = 0;
  };

  Status load();
  void worker();
  void snapshot_loop();
  // Takes a snapshot if the table changed since the last one.
  Status maybe_snapshot();
  std::string info(std::span<const std::string_view> sections);

  ServerOptions options_;
  std::string log_dir_;
  std::string policy_name_;
  Duration max_hold_{};  // ThreadDurability's bound on holding a round open
  KvStore store_;
  std::unique_ptr<CommitLog> log_;
  ServerCounters counters_;
  Auth auth_;
  std::unique_ptr<ClientRegistry> clients_;
  std::unique_ptr<ConnectionEnv> env_;
  StartupReport startup_;
  Listener listener_;
  std::chrono::steady_clock::time_point started_at_;

  std::mutex snapshot_mu_;
  std::condition_variable snapshot_cv_;
  bool stopping_ = false;  // guarded by snapshot_mu_
  SnapshotState snapshot_;
  std::mutex snapshot_run_mu_;  // one snapshot at a time
  std::thread snapshot_thread_;
  std::vector<std::thread> workers_;
};

}  // namespace commitlog::kv
