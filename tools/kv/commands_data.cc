// SPDX-License-Identifier: Apache-2.0
// The string, expiry and keyspace commands.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>
#include <optional>

#include "tools/kv/commands.h"
#include "tools/kv/resp.h"

namespace commitlog::kv::data_commands {
namespace {

using resp::parse_integer;

void not_integer(std::string* out) { resp::error(out, "ERR value is not an integer or out of range"); }
void syntax(std::string* out) { resp::error(out, "ERR syntax error"); }

// SET's expiry `value` of option `kind` (EX, PX, EXAT, PXAT) as an absolute
// time in ms; nullopt when it is not positive or overflows.
std::optional<int64_t> expiry_ms(std::string_view kind, int64_t value, int64_t now) {
  const int64_t unit_ms = kind[0] == 'E' ? 1000 : 1;
  int64_t ms = 0;
  if (value <= 0 || __builtin_mul_overflow(value, unit_ms, &ms)) return std::nullopt;
  if (kind.size() == 2 && __builtin_add_overflow(ms, now, &ms)) return std::nullopt;
  return ms;
}

// A KEYS or SCAN MATCH pattern for KvStore::scan: "*" is every key, the
// empty one included, as Redis reads it; any other pattern is matched.
std::optional<std::string_view> key_pattern(std::string_view pattern) {
  if (pattern == "*") return std::nullopt;
  return pattern;
}

}  // namespace

std::string upper(std::string_view s) {
  std::string u(s);
  std::transform(u.begin(), u.end(), u.begin(), [](unsigned char c) { return std::toupper(c); });
  return u;
}

void store_error(const Status& status, std::string* out) {
  if (status.code() == ErrorCode::kInvalidArgument) return resp::error(out, "ERR " + status.message());
  resp::error(out, "ERR commit log: " + status.to_string());
}

// SET's options as Redis 7.0 reads them: an option may be repeated (the
// last expiry wins); NX with XX, KEEPTTL with an expiry or two kinds of
// expiry are a syntax error. The expiry's value is checked once all are read.
void set(Args args, CommandContext& c, std::string* out) {
  SetOptions o;
  std::string expiry_kind;  // EX, PX, EXAT or PXAT; empty: none
  std::string_view expiry_value;
  for (size_t i = 3; i < args.size(); ++i) {
    const std::string opt = upper(args[i]);
    const bool expiry = opt == "EX" || opt == "PX" || opt == "EXAT" || opt == "PXAT";
    if (opt == "NX" && o.when != SetOptions::When::kIfPresent) {
      o.when = SetOptions::When::kIfAbsent;
    } else if (opt == "XX" && o.when != SetOptions::When::kIfAbsent) {
      o.when = SetOptions::When::kIfPresent;
    } else if (opt == "GET") {
      o.get = true;
    } else if (opt == "KEEPTTL" && expiry_kind.empty()) {
      o.keep_ttl = true;
    } else if (expiry && !o.keep_ttl && (expiry_kind.empty() || expiry_kind == opt) &&
               i + 1 < args.size()) {
      expiry_kind = opt;
      expiry_value = args[++i];
    } else {
      return syntax(out);
    }
  }
  if (!expiry_kind.empty()) {
    const std::optional<int64_t> value = parse_integer(expiry_value);
    if (!value) return not_integer(out);
    o.expire_at_ms = expiry_ms(expiry_kind, *value, c.store.now_ms());
    if (!o.expire_at_ms) return resp::error(out, "ERR invalid expire time in 'set' command");
  }
  auto r = c.store.set(args[1], args[2], o, c.fence);
  if (!r.ok()) return store_error(r.status(), out);
  if (o.get) return r->old ? resp::bulk(out, *r->old) : resp::nil(out);
  r->written ? resp::simple(out, "OK") : resp::nil(out);
}

void get(Args args, CommandContext& c, std::string* out) {
  auto v = c.store.get(args[1], c.fence);
  if (!v.ok()) return store_error(v.status(), out);
  *v ? resp::bulk(out, **v) : resp::nil(out);
}

void getdel(Args args, CommandContext& c, std::string* out) {
  auto v = c.store.getdel(args[1], c.fence);
  if (!v.ok()) return store_error(v.status(), out);
  *v ? resp::bulk(out, **v) : resp::nil(out);
}

// The reply is built in place and counted against maxmemory-clients as it
// grows (a few keys can name one large value many times over).
void mget(Args args, CommandContext& c, std::string* out) {
  constexpr uint64_t kAccountEvery = 64 << 10;
  const size_t start = out->size();
  size_t accounted = start;
  resp::array(out, args.size() - 1);
  for (std::string_view key : args.subspan(1)) {
    auto v = c.store.get(key, c.fence);
    if (!v.ok()) {
      out->resize(start);
      return store_error(v.status(), out);
    }
    *v ? resp::bulk(out, **v) : resp::nil(out);
    if (out->size() - accounted < kAccountEvery) continue;
    accounted = out->size();
    if (!reply_fits(c, out->size())) {
      out->resize(start);
      out->shrink_to_fit();
      return resp::error(out, "ERR the MGET reply exceeds maxmemory-clients: the client is disconnected");
    }
  }
}

void mset(Args args, CommandContext& c, std::string* out) {
  if (args.size() % 2 != 1) return resp::error(out, "ERR wrong number of arguments for 'mset' command");
  Status s = c.store.mset(args.subspan(1), c.fence);
  if (!s.ok()) return store_error(s, out);
  resp::simple(out, "OK");
}

void del(Args args, CommandContext& c, std::string* out) {
  auto n = c.store.del(args.subspan(1), c.fence);
  if (!n.ok()) return store_error(n.status(), out);
  resp::integer(out, *n);
}

void exists(Args args, CommandContext& c, std::string* out) {
  auto n = c.store.exists(args.subspan(1), c.fence);
  if (!n.ok()) return store_error(n.status(), out);
  resp::integer(out, *n);
}

void incr(Args args, CommandContext& c, std::string* out) {
  const std::string name = upper(args[0]);
  const bool by = name.ends_with("BY");
  if (args.size() != (by ? 3u : 2u)) {
    std::string lower(name);
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char ch) { return std::tolower(ch); });
    return resp::error(out, "ERR wrong number of arguments for '" + lower + "' command");
  }
  int64_t delta = 1;
  if (by) {
    auto d = parse_integer(args[2]);
    if (!d) return not_integer(out);
    delta = *d;
  }
  if (name.starts_with("DECR")) {
    if (delta == std::numeric_limits<int64_t>::min())
      return resp::error(out, "ERR decrement would overflow");
    delta = -delta;
  }
  auto v = c.store.incr_by(args[1], delta, c.fence);
  if (!v.ok()) return store_error(v.status(), out);
  resp::integer(out, *v);
}

void append(Args args, CommandContext& c, std::string* out) {
  auto n = c.store.append(args[1], args[2], c.fence);
  if (!n.ok()) return store_error(n.status(), out);
  resp::integer(out, *n);
}

void strlen(Args args, CommandContext& c, std::string* out) {
  auto v = c.store.get(args[1], c.fence);
  if (!v.ok()) return store_error(v.status(), out);
  resp::integer(out, *v ? static_cast<int64_t>((*v)->size()) : 0);
}

// EXPIRE key time [NX | XX | GT | LT]: the options first, then the time,
// with Redis 7's errors (XX goes with GT or LT, NX with none of them).
void expire(Args args, CommandContext& c, std::string* out) {
  ExpireIf only_if;
  for (std::string_view arg : args.subspan(3)) {
    const std::string opt = upper(arg);
    bool* flag = opt == "NX" ? &only_if.nx : opt == "XX" ? &only_if.xx : opt == "GT" ? &only_if.gt
                 : opt == "LT" ? &only_if.lt : nullptr;
    if (flag == nullptr) return resp::error(out, "ERR Unsupported option " + resp::printable(arg, 64));
    *flag = true;
  }
  if (only_if.nx && (only_if.xx || only_if.gt || only_if.lt))
    return resp::error(out, "ERR NX and XX, GT or LT options at the same time are not compatible");
  if (only_if.gt && only_if.lt)
    return resp::error(out, "ERR GT and LT options at the same time are not compatible");
  std::string name = upper(args[0]);
  const int64_t unit = name[0] == 'P' ? 1 : 1000;
  auto v = parse_integer(args[2]);
  int64_t at = 0;
  if (!v) return not_integer(out);
  if (__builtin_mul_overflow(*v, unit, &at) ||
      (!name.ends_with("AT") && __builtin_add_overflow(at, c.store.now_ms(), &at))) {
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char ch) { return std::tolower(ch); });
    return resp::error(out, "ERR invalid expire time in '" + name + "' command");
  }
  // Zero or a time in the past deletes the key (kv_store.h).
  auto r = c.store.expire_at(args[1], std::max<int64_t>(at, 1), c.fence, only_if);
  if (!r.ok()) return store_error(r.status(), out);
  resp::integer(out, *r ? 1 : 0);
}

void ttl(Args args, CommandContext& c, std::string* out) {
  auto ms = c.store.pttl(args[1], c.fence);
  if (!ms.ok()) return store_error(ms.status(), out);
  if (*ms < 0 || upper(args[0]) == "PTTL") return resp::integer(out, *ms);
  resp::integer(out, (*ms + 500) / 1000);
}

void persist(Args args, CommandContext& c, std::string* out) {
  auto r = c.store.expire_at(args[1], std::nullopt, c.fence);
  if (!r.ok()) return store_error(r.status(), out);
  resp::integer(out, *r ? 1 : 0);
}

void type(Args args, CommandContext& c, std::string* out) {
  auto v = c.store.get(args[1], c.fence);
  if (!v.ok()) return store_error(v.status(), out);
  resp::simple(out, *v ? "string" : "none");
}

void scan(Args args, CommandContext& c, std::string* out) {
  uint64_t cursor = 0;
  const auto [end, ec] = std::from_chars(args[1].data(), args[1].data() + args[1].size(), cursor);
  if (ec != std::errc() || end != args[1].data() + args[1].size()) return resp::error(out, "ERR invalid cursor");
  std::optional<std::string_view> pattern;
  int64_t count = 10;
  for (size_t i = 2; i < args.size(); ++i) {
    const std::string opt = upper(args[i]);
    if (i + 1 >= args.size()) return syntax(out);
    if (opt == "MATCH") {
      pattern = key_pattern(args[++i]);
    } else if (opt == "COUNT") {
      auto n = parse_integer(args[++i]);
      if (!n) return not_integer(out);
      if (*n < 1) return syntax(out);
      count = std::min<int64_t>(*n, 1 << 20);
    } else if (opt == "TYPE") {
      if (upper(args[++i]) != "STRING") count = 0;  // only strings here
    } else {
      return syntax(out);
    }
  }
  std::vector<std::string> keys;
  uint64_t next = 0;
  if (count > 0) {
    auto r = c.store.scan(cursor, pattern, static_cast<uint64_t>(count), &keys, c.fence);
    if (!r.ok()) return store_error(r.status(), out);
    next = *r;
  }
  resp::array(out, 2);
  resp::bulk(out, std::to_string(next));
  resp::array(out, keys.size());
  for (const std::string& k : keys) resp::bulk(out, k);
}

void keys(Args args, CommandContext& c, std::string* out) {
  std::vector<std::string> keys;
  auto r = c.store.scan(0, key_pattern(args[1]), std::numeric_limits<uint64_t>::max(), &keys, c.fence);
  if (!r.ok()) return store_error(r.status(), out);
  resp::array(out, keys.size());
  for (const std::string& k : keys) resp::bulk(out, k);
}

void dbsize(Args, CommandContext& c, std::string* out) {
  auto n = c.store.count_keys(c.fence);
  if (!n.ok()) return store_error(n.status(), out);
  resp::integer(out, static_cast<int64_t>(n->keys));
}

void flushall(Args args, CommandContext& c, std::string* out) {
  if (args.size() > 2) return syntax(out);
  if (args.size() == 2 && upper(args[1]) != "SYNC" && upper(args[1]) != "ASYNC") return syntax(out);
  Status s = c.store.flushall(c.fence);
  if (!s.ok()) return store_error(s, out);
  resp::simple(out, "OK");
}

// WAITAOF numlocal numreplicas timeout: replies [1, 0] once this client's
// writes are durable in the log (no replicas here).
void waitaof(Args args, CommandContext& c, std::string* out) {
  auto local = parse_integer(args[1]);
  auto replicas = parse_integer(args[2]);
  auto timeout = parse_integer(args[3]);
  if (!local || !replicas || !timeout || *timeout < 0) return not_integer(out);
  if (*replicas > 0) return resp::error(out, "ERR WAITAOF cannot be used with replicas: there are none");
  Status s = c.store.durable_all(c.fence);
  if (!s.ok()) return store_error(s, out);
  resp::array(out, 2);
  resp::integer(out, 1);
  resp::integer(out, 0);
}

}  // namespace commitlog::kv::data_commands
