// SPDX-License-Identifier: Apache-2.0
// The commands the server understands, executed against the KvStore:
//   PING [message]   ECHO message   SET key value   GET key   DEL key...
//   EXISTS key...    INCR key       MSET key value...   MGET key...
//   DBSIZE           INFO [section...]   QUIT
//   HELLO [2 [AUTH user password] [SETNAME name]]   (RESP2 only: HELLO 3 gets -NOPROTO)
// Anything else gets "-ERR unknown command", a wrong argument count
// "-ERR wrong number of arguments"; the connection stays open.
//
// Thread-safety: execute() from any fiber; the context is the connection's.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <string_view>

#include "tools/kv/kv_store.h"

namespace commitlog::kv {

struct CommandContext {
  KvStore& store;
  // The text of INFO for the requested sections (lower case; empty: default).
  std::function<std::string(std::span<const std::string_view> sections)> info;
  DurableFence fence;  // what the replies so far wait for
  bool quit = false;   // QUIT: close after sending the replies
  uint64_t client_id = 0;  // the connection's number, for HELLO
};

// Executes one request and appends its reply to `out`. `args` is not empty.
void execute(std::span<const std::string_view> args, CommandContext& context, std::string* out);

}  // namespace commitlog::kv
