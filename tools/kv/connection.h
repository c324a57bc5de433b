// SPDX-License-Identifier: Apache-2.0
// One client connection, served by one fiber.
//
// The loop: read what the client sent; parse and execute every complete
// request in it, appending the replies to one buffer; wait once until
// everything those replies depend on is durable (the DurableFence); send the
// buffer. A pipelining client so gets all its writes of one read made
// durable by one wait, and a reply never leaves before its write is durable.
//
// A protocol error gets "-ERR Protocol error: ..." and the connection is
// closed, as with Redis. If the commit log fails while replies wait, the
// buffered replies are dropped, the client gets one "-ERR commit log: ..."
// and the connection is closed: no +OK is sent for a write that may be lost.
// An abrupt disconnect just ends the fiber; writes already appended still
// become durable.
//
// Before a password is given (auth.h) only AUTH and QUIT run. The client's
// buffers are accounted with the ClientRegistry (client_limits.h) whenever
// their capacity changes, a growth before it is made; the registry may
// disconnect the client, which the fiber sees as the end of the stream.
//
// Thread-safety: run on a fiber of the thread whose scheduler and
// ThreadDurability (durability.h) the Worker names.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "tools/kv/auth.h"
#include "tools/kv/client_limits.h"
#include "tools/kv/commands.h"
#include "tools/kv/durability.h"
#include "tools/kv/fiber_io.h"
#include "tools/kv/kv_store.h"
#include "tools/kv/resp.h"

namespace commitlog::kv {

struct ServerCounters {
  std::atomic<uint64_t> connections_received{0};
  std::atomic<int64_t> connected{0};
  std::atomic<uint64_t> commands{0};
  std::atomic<uint64_t> protocol_errors{0};
  std::atomic<uint64_t> durability_failures{0};
};

struct ConnectionEnv {
  KvStore& store;
  resp::Limits limits;
  ServerCounters& counters;
  const ServerHooks& hooks;
  const Auth& auth;
};

// What one worker thread gives the connections it serves; theirs alone.
struct Worker {
  EpollScheduler& scheduler;
  ThreadDurability* durability;
};

// Serves the accepted socket `fd`, admitted as `client`, until the client
// leaves or is disconnected; closes it.
void serve_connection(int fd, std::unique_ptr<ClientRegistry::Handle> client,
                      const ConnectionEnv& env, Worker& worker);

}  // namespace commitlog::kv
