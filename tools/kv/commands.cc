// SPDX-License-Identifier: Apache-2.0
// The command table, and the connection and server commands.
#include "tools/kv/commands.h"

#include <algorithm>
#include <cctype>

#include <fmt/core.h>

#include "tools/kv/auth.h"
#include "tools/kv/glob.h"
#include "tools/kv/resp.h"

namespace commitlog::kv {
namespace {

using data_commands::Args;
using data_commands::upper;

void ping(Args args, CommandContext&, std::string* out) {
  if (args.size() > 2) return resp::error(out, "ERR wrong number of arguments for 'ping' command");
  if (args.size() == 1) return resp::simple(out, "PONG");
  resp::bulk(out, args[1]);
}

void echo(Args args, CommandContext&, std::string* out) { resp::bulk(out, args[1]); }

std::string lower(std::string_view s) {
  std::string l(s);
  std::transform(l.begin(), l.end(), l.begin(), [](unsigned char ch) { return std::tolower(ch); });
  return l;
}

void info(Args args, CommandContext& c, std::string* out) {
  std::vector<std::string> lowered;
  for (std::string_view a : args.subspan(1)) lowered.push_back(lower(a));
  std::vector<std::string_view> sections(lowered.begin(), lowered.end());
  resp::bulk(out, c.hooks && c.hooks->info ? c.hooks->info(sections) : std::string());
}

bool valid_name(std::string_view name) {
  return std::all_of(name.begin(), name.end(), [](char ch) { return ch > ' ' && ch <= '~'; });
}

void set_name(CommandContext& c, std::string_view name) {
  c.name = std::string(name);
  if (c.client != nullptr) c.client->set_name(name);
}

// A CLIENT LIST line with every field of Redis 7, in its order, since
// clients parse them all (redis-py's CLIENT INFO does). No pub/sub, MULTI
// or reply lists here: those are 0 or -1 as in Redis for a client without
// them. The buffers are known only together (tot-mem); the split fields
// (qbuf, qbuf-free, argv-mem, rbs, rbp) are 0.
std::string client_line(const ClientView& v) {
  return fmt::format(
      "id={} addr={} laddr={} fd={} name={} age={} idle={} flags=N db=0 sub=0 psub=0 ssub=0 "
      "multi=-1 qbuf=0 qbuf-free=0 argv-mem=0 multi-mem=0 rbs=0 rbp=0 obl=0 oll=0 omem=0 "
      "tot-mem={} events=r cmd={} user=default redir=-1 resp=2\n",
      v.id, v.addr, v.laddr, v.fd, v.name, v.age_s, v.idle_s, v.memory, v.cmd);
}

// Auth::admit() has checked the request and done its AUTH. RESP2 alone: HELLO
// 3 gets NOPROTO (as from a Redis without RESP3; clients go on in RESP2).
void hello(Args args, CommandContext& c, std::string* out) {
  const Hello request = parse_hello(args);
  if (!request.error.empty()) return resp::error(out, request.error);
  if (request.version == 3) return resp::error(out, "NOPROTO unsupported protocol version");
  for (size_t i = 1; i + 1 < args.size(); ++i) {
    if (upper(args[i]) == "SETNAME") set_name(c, args[i + 1]);
  }
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

void client(Args args, CommandContext& c, std::string* out) {
  const std::string sub = upper(args[1]);
  if (sub == "SETNAME" && args.size() == 3) {
    if (!valid_name(args[2])) return resp::error(out, "ERR Client names cannot contain spaces, newlines or special characters.");
    set_name(c, args[2]);
    return resp::simple(out, "OK");
  }
  if (sub == "GETNAME" && args.size() == 2) return c.name.empty() ? resp::nil(out) : resp::bulk(out, c.name);
  if (sub == "ID" && args.size() == 2) return resp::integer(out, static_cast<int64_t>(c.client_id));
  if (sub == "SETINFO" && args.size() == 4) {
    const std::string attr = upper(args[2]);
    if (attr != "LIB-NAME" && attr != "LIB-VER") return resp::error(out, "ERR Unrecognized option '" + std::string(args[2]) + "'");
    return resp::simple(out, "OK");
  }
  if (sub == "LIST" && args.size() == 2) {
    std::string lines;
    if (c.client != nullptr) {
      for (const ClientView& v : c.client->registry().list()) lines += client_line(v);
    }
    return resp::bulk(out, lines);
  }
  if (sub == "INFO" && args.size() == 2) {
    return c.client != nullptr ? resp::bulk(out, client_line(c.client->view())) : resp::bulk(out, "");
  }
  resp::error(out, "ERR unknown subcommand or wrong number of arguments for 'client|" +
                       resp::printable(args[1], 32) + "' command");
}

void select(Args args, CommandContext&, std::string* out) {
  if (args[1] != "0") return resp::error(out, "ERR DB index is out of range");
  resp::simple(out, "OK");
}

// Redis's reply to a subcommand given the wrong number of arguments.
void subcommand_arity(std::string_view command, std::string_view sub, std::string* out) {
  resp::error(out, fmt::format("ERR wrong number of arguments for '{}|{}' command", command, lower(sub)));
}

// CONFIG GET as Redis 7.0 answers it: each setting once, in the order first
// matched; a pattern without glob characters is a name, echoed as given.
void config_get(Args patterns, CommandContext& c, std::string* out) {
  std::vector<std::pair<std::string, std::string>> hits;
  std::vector<std::string> matched;  // the names in hits, lower case
  std::vector<std::pair<std::string, std::string>> settings;
  if (c.hooks && c.hooks->config) settings = c.hooks->config();
  for (std::string_view pattern : patterns) {
    const std::string wanted = lower(pattern);
    const bool glob = wanted.find_first_of("[*?") != std::string::npos;
    for (const auto& [name, value] : settings) {
      if (std::find(matched.begin(), matched.end(), name) != matched.end()) continue;
      if (glob ? !glob_match(wanted, name) : wanted != name) continue;
      matched.push_back(name);
      hits.emplace_back(glob ? name : std::string(pattern), value);
    }
  }
  resp::array(out, hits.size() * 2);
  for (const auto& [name, value] : hits) {
    resp::bulk(out, name);
    resp::bulk(out, value);
  }
}

void config(Args args, CommandContext& c, std::string* out) {
  const std::string sub = upper(args[1]);
  if (sub == "GET" && args.size() >= 3) return config_get(args.subspan(2), c, out);
  if (sub == "RESETSTAT" && args.size() == 2) return resp::simple(out, "OK");
  if (sub == "GET" || sub == "RESETSTAT") return subcommand_arity("config", sub, out);
  resp::error(out, "ERR CONFIG " + resp::printable(args[1], 32) + " is not supported; CONFIG GET is");
}

void shutdown(Args args, CommandContext& c, std::string* out) {
  for (std::string_view a : args.subspan(1)) {
    const std::string opt = upper(a);
    if (opt != "NOSAVE" && opt != "SAVE" && opt != "NOW" && opt != "FORCE") return resp::error(out, "ERR syntax error");
  }
  if (!c.hooks || !c.hooks->shutdown) return resp::error(out, "ERR SHUTDOWN is not available here");
  // As with Redis, no reply: the connection closes while the server stops.
  c.hooks->shutdown(c.client != nullptr ? c.client->view().addr : "unlisted");
  c.quit = true;
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

void command(Args args, CommandContext& c, std::string* out);

namespace d = data_commands;
constexpr Command kCommands[] = {
    {"PING", -1, ping},        {"ECHO", 2, echo},           {"SET", -3, d::set},
    {"GET", 2, d::get},        {"GETDEL", 2, d::getdel},    {"MGET", -2, d::mget},
    {"MSET", -3, d::mset},     {"DEL", -2, d::del},         {"UNLINK", -2, d::del},
    {"EXISTS", -2, d::exists}, {"INCR", 2, d::incr},        {"INCRBY", 3, d::incr},
    {"DECR", 2, d::incr},      {"DECRBY", 3, d::incr},      {"APPEND", 3, d::append},
    {"STRLEN", 2, d::strlen},  {"EXPIRE", -3, d::expire},   {"PEXPIRE", -3, d::expire},
    {"EXPIREAT", -3, d::expire}, {"PEXPIREAT", -3, d::expire}, {"TTL", 2, d::ttl},
    {"PTTL", 2, d::ttl},       {"PERSIST", 2, d::persist},  {"TYPE", 2, d::type},
    {"SCAN", -2, d::scan},     {"KEYS", 2, d::keys},        {"DBSIZE", 1, d::dbsize},
    {"FLUSHALL", -1, d::flushall}, {"FLUSHDB", -1, d::flushall}, {"SELECT", 2, select},
    {"HELLO", -1, hello},      {"CLIENT", -2, client},      {"COMMAND", -1, command},
    {"CONFIG", -2, config},    {"INFO", -1, info},          {"SHUTDOWN", -1, shutdown},
    {"WAITAOF", 4, d::waitaof}, {"QUIT", -1, quit},
};

// COMMAND: the table as Redis describes it (name, arity, flags, first key,
// last key, step); COUNT its size; DOCS an empty map (no docs kept).
void command(Args args, CommandContext&, std::string* out) {
  const std::string sub = args.size() > 1 ? upper(args[1]) : std::string();
  if (sub == "COUNT") {
    if (args.size() != 2) return subcommand_arity("command", sub, out);
    return resp::integer(out, static_cast<int64_t>(std::size(kCommands)));
  }
  if (sub == "DOCS") return resp::array(out, 0);
  if (!sub.empty()) return resp::error(out, "ERR COMMAND " + resp::printable(args[1], 32) + " is not supported");
  resp::array(out, std::size(kCommands));
  for (const Command& cmd : kCommands) {
    resp::array(out, 6);
    resp::bulk(out, lower(cmd.name));
    resp::integer(out, cmd.arity);
    resp::array(out, 0);
    resp::integer(out, 0);
    resp::integer(out, 0);
    resp::integer(out, 0);
  }
}

const Command* find(std::string_view name) {
  if (name.size() > 9) return nullptr;
  char up[9];
  for (size_t i = 0; i < name.size(); ++i)
    up[i] = static_cast<char>(std::toupper(static_cast<unsigned char>(name[i])));
  const std::string_view key(up, name.size());
  for (const Command& c : kCommands) {
    if (c.name == key) return &c;
  }
  return nullptr;
}

// What CLIENT LIST shows as the command: its name in lower case, with the
// subcommand of a container command ("client|list"); "NULL" when unknown.
// A subcommand is a short word: anything else a client sends there is not
// shown, so no client can write fields or lines into another's CLIENT LIST.
std::string command_label(const Command* command, std::span<const std::string_view> args) {
  if (command == nullptr) return "NULL";
  const bool container = command->name == "CLIENT" || command->name == "CONFIG" || command->name == "COMMAND";
  const auto word = [](std::string_view s) {
    return !s.empty() && s.size() <= 32 &&
           std::all_of(s.begin(), s.end(), [](char ch) { return std::isalpha(static_cast<unsigned char>(ch)) || ch == '-'; });
  };
  return container && args.size() > 1 && word(args[1]) ? lower(command->name) + "|" + lower(args[1])
                                                       : lower(command->name);
}

}  // namespace

bool reply_fits(CommandContext& context, uint64_t reply_bytes) {
  return context.client == nullptr || context.client->set_memory(context.request_bytes + reply_bytes);
}

void execute(std::span<const std::string_view> args, CommandContext& context, std::string* out) {
  const Command* command = find(args[0]);
  if (context.client != nullptr) context.client->set_command(command_label(command, args));
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
    return resp::error(out, fmt::format("ERR wrong number of arguments for '{}' command", lower(command->name)));
  }
  command->run(args, context, out);
}

}  // namespace commitlog::kv
