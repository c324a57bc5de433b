// SPDX-License-Identifier: Apache-2.0
// The server-wide limits on clients, with Redis's names and semantics:
//   maxclients          past it a new connection gets "-ERR max number of
//                       clients reached" and is closed;
//   maxmemory-clients   a bound on the query and reply buffers of all clients
//                       together: past it the clients using the most are
//                       disconnected, largest first, until the rest fit (as
//                       Redis 7 does), so no set of clients can grow the
//                       server without bound;
//   timeout             a client that neither sent nor received anything for
//                       this long is disconnected.
//
// Disconnecting is shutdown(2) of the client's socket, from whichever thread
// decides it: the client's own fiber then reads the end of the stream and
// ends as after any disconnect, freeing its buffers on its own thread.
//
// The registry is also the table CLIENT LIST reads: each client's id (in the
// order they came), addresses, name, age, idle time and last command.
//
// Thread-safety: every member of ClientRegistry and of a Handle may be called
// from any thread. A Handle's socket must stay open until the Handle is
// destroyed.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "commitlog/status.h"

namespace commitlog::kv {

struct ClientLimits {
  uint64_t max_clients = 10000;
  uint64_t max_memory = 256u << 20;         // 0: no bound
  std::chrono::milliseconds idle_timeout{0};  // 0: never
};

// Descriptors kept for the log, the snapshots, epoll and the listener
// besides one per client, as Redis keeps 32.
inline constexpr uint64_t kReservedFiles = 32;
// Raises this process's limit of open files (RLIMIT_NOFILE) to fit
// `max_clients` clients and kReservedFiles, as far as the hard limit lets it;
// returns how many clients fit (`max_clients` or fewer).
uint64_t fit_open_files(uint64_t max_clients);

// One client as CLIENT LIST shows it.
struct ClientView {
  uint64_t id = 0;
  std::string addr;   // the peer, "ip:port" ("[ip]:port" for IPv6)
  std::string laddr;  // the local end
  int fd = -1;
  std::string name;
  int64_t age_s = 0;   // since it connected
  int64_t idle_s = 0;  // since it last sent or received anything
  uint64_t memory = 0;  // its buffers
  std::string cmd;      // its last command ("set", "client|list"; "NULL": none yet)
};

// A size as Redis's config takes it: a count of bytes with an optional unit,
// k/m/g (powers of 1000) or kb/mb/gb (powers of 1024), in any case.
[[nodiscard]] Result<uint64_t> parse_memory_size(std::string_view text);

class ClientRegistry {
 public:
  class Handle;

  explicit ClientRegistry(ClientLimits limits);
  ~ClientRegistry();  // stops the idle reaper
  ClientRegistry(const ClientRegistry&) = delete;
  ClientRegistry& operator=(const ClientRegistry&) = delete;

  // Registers the client on socket `fd`; null when maxclients are connected
  // (counted as a rejected connection).
  std::unique_ptr<Handle> admit(int fd);

  // Every connected client, in the order they came.
  std::vector<ClientView> list() const;

  const ClientLimits& limits() const { return limits_; }
  uint64_t connected() const;
  uint64_t memory() const { return memory_.load(std::memory_order_relaxed); }
  uint64_t rejected() const { return rejected_.load(std::memory_order_relaxed); }
  uint64_t evicted() const { return evicted_.load(std::memory_order_relaxed); }
  uint64_t timed_out() const { return timed_out_.load(std::memory_order_relaxed); }

 private:
  struct Client;
  bool set_memory(Client& client, uint64_t bytes);
  void remove(Client& client);
  // Disconnects `client` (it stops counting against the bound). REQUIRES: mu_ held.
  void disconnect_locked(Client& client);
  void reap_idle();
  // REQUIRES: mu_ held.
  static ClientView view_locked(const Client& client, std::chrono::steady_clock::time_point now);

  const ClientLimits limits_;
  mutable std::mutex mu_;
  std::vector<Client*> clients_;  // guarded by mu_
  std::atomic<uint64_t> memory_{0};  // of the clients not yet disconnected
  std::atomic<uint64_t> rejected_{0}, evicted_{0}, timed_out_{0};
  uint64_t next_id_ = 1;  // guarded by mu_
  std::condition_variable stop_cv_;
  bool stopping_ = false;  // guarded by mu_
  std::thread reaper_;     // only with an idle timeout
};

// One admitted client. Destroying it unregisters the client.
class ClientRegistry::Handle {
 public:
  ~Handle();
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;

  // The client's buffers now hold `bytes`. Past maxmemory-clients the
  // largest clients, possibly this one, are disconnected. False when this
  // one is (now or before): it should not grow its buffers any more.
  bool set_memory(uint64_t bytes);
  // The client sent or received something: it is not idle.
  void touch();
  // Its number, unique in this registry (CLIENT ID, HELLO).
  uint64_t id() const;
  // What CLIENT LIST shows: the name given by CLIENT SETNAME or HELLO, and
  // the command it runs (lower case).
  void set_name(std::string_view name);
  void set_command(std::string_view cmd);
  ClientView view() const;
  ClientRegistry& registry() const { return registry_; }

 private:
  friend class ClientRegistry;
  Handle(ClientRegistry& registry, std::unique_ptr<Client> client);

  ClientRegistry& registry_;
  std::unique_ptr<Client> client_;
};

}  // namespace commitlog::kv
