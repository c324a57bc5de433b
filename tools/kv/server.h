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
//     to the checkpoint the flush made durable (log_discarder.h, engine.h);
//   the commit log's own threads (the only fsyncs of writes; in the
//     reference setting the workers sync RocksDB's WAL themselves);
//   the main thread, waiting for SIGINT or SIGTERM (SHUTDOWN raises SIGTERM,
//     naming the client that sent it first).
//
// Start: check the options, the directories and the port; open the data
// (store_lifecycle.h); serve. Stop: close the data.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tools/kv/auth.h"
#include "tools/kv/client_limits.h"
#include "tools/kv/commands.h"
#include "tools/kv/connection.h"
#include "tools/kv/listener.h"
#include "tools/kv/server_options.h"
#include "tools/kv/store_lifecycle.h"

namespace commitlog::kv {

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
  Status check_input(const Options& log_options);
  void worker();
  std::string policy_name() const;
  std::string info(std::span<const std::string_view> sections);
  std::string info_persistence();
  double ms_since_start() const {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started_at_).count();
  }
  std::vector<std::pair<std::string, std::string>> config() const;

  ServerOptions options_;
  StoreLifecycle data_;
  ServerHooks hooks_;
  ServerCounters counters_;
  Auth auth_;
  std::unique_ptr<ClientRegistry> clients_;
  std::unique_ptr<ConnectionEnv> env_;
  bool bad_input_ = false;
  Listener listener_;
  std::chrono::steady_clock::time_point started_at_;
  std::vector<std::thread> workers_;
  // Who sent SHUTDOWN, which raises the SIGTERM run() then takes; nullopt
  // while none did.
  std::mutex shutdown_mu_;
  std::optional<std::string> shutdown_by_;  // guarded by shutdown_mu_
};

}  // namespace commitlog::kv
