// SPDX-License-Identifier: Apache-2.0
// The server's listening socket and its acceptors: one fiber per worker
// thread accepts on the shared socket, admits each connection with the
// ClientRegistry (one past maxclients is told "-ERR max number of clients
// reached" and closed) and serves it on a fiber of its own.
//
// An acceptor lets the thread's other fibers run after each connection it
// accepts, so a flood of connections delays the clients already served by
// one accept each, not by the whole flood.
//
// Thread-safety: open() before any acceptor runs; accept_loop() on fibers of
// worker threads; stop() from any thread.
#pragma once

#include <atomic>
#include <string>

#include "commitlog/status.h"
#include "tools/kv/client_limits.h"
#include "tools/kv/connection.h"

namespace commitlog::kv {

class Listener {
 public:
  Listener() = default;
  ~Listener();  // closes the socket
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;

  // Binds `bind` (an IPv4 or IPv6 address) at `port` (0: any free one) and listens.
  [[nodiscard]] Status open(const std::string& bind, int port);
  int port() const { return port_; }  // the bound one, after open()

  // Accepts and serves connections until stop(). Runs on a fiber of the
  // thread `worker` names; `clients`, `env` and `worker` outlive the
  // connections it serves.
  void accept_loop(ClientRegistry& clients, const ConnectionEnv& env, Worker& worker);
  // Makes every accept_loop() return at its next wake-up.
  void stop();

 private:
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> accepting_{true};
};

}  // namespace commitlog::kv
