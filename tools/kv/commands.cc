// SPDX-License-Identifier: Apache-2.0
#include "tools/kv/commands.h"

#include <algorithm>
#include <cctype>
#include <optional>

#include <fmt/core.h>

#include "tools/kv/auth.h"
#include "tools/kv/resp.h"

namespace commitlog::kv {
namespace {

using Args = std::span<const std::string_view>;

// An error of the store as a reply: the message of a refused argument, or
// the log's failure.
void store_error(const Status& status, std::string* out) {
  if (status.code() == ErrorCode::kInvalidArgument) {
    resp::error(out, "ERR " + status.message());
  } else {
    resp::error(out, "ERR commit log: " + status.to_string());
  }
}

void ping(Args args, CommandContext&, std::string* out) {
  if (args.size() > 2) return resp::error(out, "ERR wrong number of arguments for 'ping' command");
  if (args.size() == 1) return resp::simple(out, "PONG");
  resp::bulk(out, args[1]);
}

void echo(Args args, CommandContext&, std::string* out) { resp::bulk(out, args[1]); }

void set(Args args, CommandContext& c, std::string* out) {
  if (args.size() != 3) return resp::error(out, "ERR syntax error (SET options are not supported)");
  Status status = c.store.set(args.subspan(1), c.fence);
  if (!status.ok()) return store_error(status, out);
  resp::simple(out, "OK");
}

void get(Args args, CommandContext& c, std::string* out) {
  std::optional<std::string> value = c.store.get(args[1], c.fence);
  if (!value) return resp::nil(out);
  resp::bulk(out, *value);
}

void del(Args args, CommandContext& c, std::string* out) {
  auto removed = c.store.del(args.subspan(1), c.fence);
  if (!removed.ok()) return store_error(removed.status(), out);
  resp::integer(out, *removed);
}

void exists(Args args, CommandContext& c, std::string* out) {
  resp::integer(out, c.store.exists(args.subspan(1), c.fence));
}

void incr(Args args, CommandContext& c, std::string* out) {
  auto value = c.store.incr(args[1], c.fence);
  if (!value.ok()) return store_error(value.status(), out);
  resp::integer(out, *value);
}

void mset(Args args, CommandContext& c, std::string* out) {
  if (args.size() % 2 != 1)
    return resp::error(out, "ERR wrong number of arguments for 'mset' command");
  Status status = c.store.set(args.subspan(1), c.fence);
  if (!status.ok()) return store_error(status, out);
  resp::simple(out, "OK");
}

void mget(Args args, CommandContext& c, std::string* out) {
  resp::array(out, args.size() - 1);
  for (std::string_view key : args.subspan(1)) {
    std::optional<std::string> value = c.store.get(key, c.fence);
    value ? resp::bulk(out, *value) : resp::nil(out);
  }
}

void dbsize(Args, CommandContext& c, std::string* out) {
  resp::integer(out, static_cast<int64_t>(c.store.size(c.fence)));
}

void info(Args args, CommandContext& c, std::string* out) {
  std::vector<std::string> lowered;
  for (std::string_view a : args.subspan(1)) {
    std::string s(a);
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char ch) { return std::tolower(ch); });
    lowered.push_back(std::move(s));
  }
  std::vector<std::string_view> sections(lowered.begin(), lowered.end());
  resp::bulk(out, c.info ? c.info(sections) : std::string());
}

// Auth::admit() has checked the request and done its AUTH. The server
// speaks RESP2 alone: HELLO 3 gets NOPROTO (as from a Redis without RESP3;
// clients then go on in RESP2), the rest the server's description, a map
// sent as RESP2 sends maps, a flat array of keys and values. SETNAME's name
// is checked and dropped: no command shows it.
void hello(Args args, CommandContext& c, std::string* out) {
  const Hello request = parse_hello(args);
  if (!request.error.empty()) return resp::error(out, request.error);
  if (request.version == 3) return resp::error(out, "NOPROTO unsupported protocol version");
  resp::array(out, 14);
  resp::bulk(out, "server");
  resp::bulk(out, "commitlog-kv");
  resp::bulk(out, "version");
  resp::bulk(out, COMMITLOG_VERSION);
  resp::bulk(out, "proto");
  resp::integer(out, 2);
  resp::bulk(out, "id");
  resp::integer(out, static_cast<int64_t>(c.client_id));
  resp::bulk(out, "mode");
  resp::bulk(out, "standalone");
  resp::bulk(out, "role");
  resp::bulk(out, "master");
  resp::bulk(out, "modules");
  resp::array(out, 0);
}

void quit(Args, CommandContext& c, std::string* out) {
  c.quit = true;
  resp::simple(out, "OK");
}

struct Command {
  std::string_view name;  // upper case
  int arity;              // Redis's convention: n exactly, or -n for at least n (the name included)
  void (*run)(Args, CommandContext&, std::string*);
};

constexpr Command kCommands[] = {
    {"PING", -1, ping}, {"ECHO", 2, echo},      {"SET", -3, set},   {"GET", 2, get},
    {"DEL", -2, del},   {"EXISTS", -2, exists}, {"INCR", 2, incr},  {"MSET", -3, mset},
    {"MGET", -2, mget}, {"DBSIZE", 1, dbsize},  {"INFO", -1, info}, {"QUIT", -1, quit},
    {"HELLO", -1, hello},
};

const Command* find(std::string_view name) {
  if (name.size() > 8) return nullptr;
  char upper[8];
  for (size_t i = 0; i < name.size(); ++i)
    upper[i] = static_cast<char>(std::toupper(static_cast<unsigned char>(name[i])));
  const std::string_view key(upper, name.size());
  for (const Command& c : kCommands) {
    if (c.name == key) return &c;
  }
  return nullptr;
}

}  // namespace

void execute(std::span<const std::string_view> args, CommandContext& context, std::string* out) {
  const Command* command = find(args[0]);
  if (command == nullptr) {
    std::string message = fmt::format("ERR unknown command '{}', with args beginning with: ",
                                      resp::printable(args[0]));
    for (size_t i = 1; i < args.size() && message.size() < 256; ++i) {
      message += fmt::format("'{}' ", resp::printable(args[i], 64));
    }
    return resp::error(out, message);
  }
  const auto n = static_cast<int>(std::min<size_t>(args.size(), 1u << 30));
  if ((command->arity > 0 && n != command->arity) || (command->arity < 0 && n < -command->arity)) {
    std::string lower(command->name);
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char ch) { return std::tolower(ch); });
    return resp::error(out, fmt::format("ERR wrong number of arguments for '{}' command", lower));
  }
  command->run(args, context, out);
}

}  // namespace commitlog::kv
