// SPDX-License-Identifier: Apache-2.0
// The commands the server understands (docs/kv.md lists them), executed
// against the KvStore; what belongs to the server (INFO, CONFIG, SHUTDOWN)
// through ServerHooks. RESP2 only: HELLO 3 gets -NOPROTO. Anything else gets
// "-ERR unknown command", a wrong argument count "-ERR wrong number of
// arguments"; the connection stays open.
//
// Thread-safety: execute() from any fiber; the context is the connection's.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tools/kv/client_limits.h"
#include "tools/kv/kv_store.h"

namespace commitlog::kv {

struct ServerHooks {
  // The text of INFO for the requested sections (lower case; empty: default).
  std::function<std::string(std::span<const std::string_view> sections)> info;
  // Every setting CONFIG GET knows, name and value.
  std::function<std::vector<std::pair<std::string, std::string>>()> config;
  // SHUTDOWN: stop the server as SIGTERM does; `client` is who asked, its
  // address ("127.0.0.1:50312"), for the log line that says why it stops.
  std::function<void(const std::string& client)> shutdown;
};

struct CommandContext {
  KvStore& store;
  const ServerHooks* hooks = nullptr;  // may be null (tests)
  DurableFence fence;      // what the replies so far wait for
  bool quit = false;       // QUIT: close after sending the replies
  uint64_t client_id = 0;  // the connection's number (HELLO, CLIENT ID)
  std::string name;        // CLIENT SETNAME
  // The connection in the server's table (CLIENT LIST); null: not listed.
  ClientRegistry::Handle* client = nullptr;
  uint64_t request_bytes = 0;  // the connection's query buffer (reply_fits())
};

// Counts a reply of `reply_bytes` being built, with the query buffer,
// against maxmemory-clients (ClientRegistry), so that one command's reply
// cannot grow the server past the bound. False when that disconnected the
// client: the command should stop building it.
bool reply_fits(CommandContext& context, uint64_t reply_bytes);

// Executes one request and appends its reply to `out`. `args` is not empty.
void execute(std::span<const std::string_view> args, CommandContext& context, std::string* out);

// The handlers of the data commands (commands_data.cc); args[0] is the name.
namespace data_commands {
using Args = std::span<const std::string_view>;
void set(Args, CommandContext&, std::string*);
void get(Args, CommandContext&, std::string*);
void getdel(Args, CommandContext&, std::string*);
void mget(Args, CommandContext&, std::string*);
void mset(Args, CommandContext&, std::string*);
void del(Args, CommandContext&, std::string*);
void exists(Args, CommandContext&, std::string*);
void incr(Args, CommandContext&, std::string*);  // INCR INCRBY DECR DECRBY
void append(Args, CommandContext&, std::string*);
void strlen(Args, CommandContext&, std::string*);
void expire(Args, CommandContext&, std::string*);  // EXPIRE PEXPIRE EXPIREAT PEXPIREAT
void ttl(Args, CommandContext&, std::string*);     // TTL PTTL
void persist(Args, CommandContext&, std::string*);
void type(Args, CommandContext&, std::string*);
void scan(Args, CommandContext&, std::string*);
void keys(Args, CommandContext&, std::string*);
void dbsize(Args, CommandContext&, std::string*);
void flushall(Args, CommandContext&, std::string*);  // FLUSHALL FLUSHDB
void waitaof(Args, CommandContext&, std::string*);
// An error of the store as a reply.
void store_error(const Status& status, std::string* out);
// Redis's upper-cased name of args[0].
std::string upper(std::string_view s);
}  // namespace data_commands

}  // namespace commitlog::kv
