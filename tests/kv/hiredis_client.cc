// SPDX-License-Identifier: Apache-2.0
// hiredis (libhiredis-dev) against a running commitlog-kv: every command of
// docs/kv.md through the C client's parser, pipelined replies included.
// Run by tests/kv/redis_py_test.py --hiredis, which starts the server.
//
//   kv_hiredis_client PORT      exit 0 when every reply is as expected
#include <hiredis/hiredis.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

int failures = 0;

void expect(bool ok, const char* what, const redisReply* r) {
  if (ok) return;
  ++failures;
  std::fprintf(stderr, "FAILED: %s (reply type %d, str %s, integer %lld)\n", what, r ? r->type : -1,
               r && r->str ? r->str : "-", r ? r->integer : 0);
}

// Runs a command and checks its reply with `pred`.
template <typename Pred>
void run(redisContext* c, const char* what, Pred pred, const char* format, ...) {
  va_list ap;
  va_start(ap, format);
  auto* r = static_cast<redisReply*>(redisvCommand(c, format, ap));
  va_end(ap);
  expect(r != nullptr && pred(r), what, r);
  if (r) freeReplyObject(r);
}

bool is_status(const redisReply* r, const char* s) {
  return r->type == REDIS_REPLY_STATUS && std::strcmp(r->str, s) == 0;
}
bool is_string(const redisReply* r, const char* s) {
  return r->type == REDIS_REPLY_STRING && std::strcmp(r->str, s) == 0;
}
bool is_int(const redisReply* r, long long v) { return r->type == REDIS_REPLY_INTEGER && r->integer == v; }
bool is_nil(const redisReply* r) { return r->type == REDIS_REPLY_NIL; }
bool is_error(const redisReply* r, const char* prefix) {
  return r->type == REDIS_REPLY_ERROR && std::strncmp(r->str, prefix, std::strlen(prefix)) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s PORT\n", argv[0]);
    return 2;
  }
  redisContext* c = redisConnect("127.0.0.1", std::atoi(argv[1]));
  if (c == nullptr || c->err) {
    std::fprintf(stderr, "connect: %s\n", c ? c->errstr : "out of memory");
    return 1;
  }
  run(c, "PING", [](auto r) { return is_status(r, "PONG"); }, "PING");
  run(c, "HELLO 3", [](auto r) { return is_error(r, "NOPROTO"); }, "HELLO 3");
  run(c, "HELLO 2", [](auto r) { return r->type == REDIS_REPLY_ARRAY && r->elements == 14; }, "HELLO 2");
  run(c, "CLIENT SETNAME", [](auto r) { return is_status(r, "OK"); }, "CLIENT SETNAME hiredis");
  run(c, "CLIENT GETNAME", [](auto r) { return is_string(r, "hiredis"); }, "CLIENT GETNAME");
  // CLIENT LIST: a line for each of two connections.
  redisContext* second = redisConnect("127.0.0.1", std::atoi(argv[1]));
  if (second == nullptr || second->err) {
    std::fprintf(stderr, "connect: %s\n", second ? second->errstr : "out of memory");
    return 1;
  }
  run(second, "CLIENT SETNAME, second client", [](auto r) { return is_status(r, "OK"); }, "CLIENT SETNAME second");
  run(c, "CLIENT LIST", [](auto r) {
    return r->type == REDIS_REPLY_STRING && std::strstr(r->str, " name=hiredis ") &&
           std::strstr(r->str, " name=second ") && std::strstr(r->str, " cmd=client|setname ") &&
           std::strstr(r->str, " cmd=client|list ") && std::strstr(r->str, " db=0 ");
  }, "CLIENT LIST");
  redisFree(second);
  // EXPIRE's conditions (Redis 7) and their errors.
  run(c, "SET for EXPIRE", [](auto r) { return is_status(r, "OK"); }, "SET e v");
  run(c, "EXPIRE XX, no expiry", [](auto r) { return is_int(r, 0); }, "EXPIRE e 100 XX");
  run(c, "EXPIRE NX, no expiry", [](auto r) { return is_int(r, 1); }, "EXPIRE e 100 NX");
  run(c, "EXPIRE NX, an expiry", [](auto r) { return is_int(r, 0); }, "EXPIRE e 100 NX");
  run(c, "EXPIRE GT, earlier", [](auto r) { return is_int(r, 0); }, "EXPIRE e 50 GT");
  run(c, "EXPIRE XX GT, later", [](auto r) { return is_int(r, 1); }, "EXPIRE e 200 XX GT");
  run(c, "PEXPIRE LT, earlier", [](auto r) { return is_int(r, 1); }, "PEXPIRE e 5000 lt");
  run(c, "TTL after LT", [](auto r) { return r->type == REDIS_REPLY_INTEGER && r->integer <= 5; }, "TTL e");
  run(c, "EXPIRE NX GT", [](auto r) { return is_error(r, "ERR NX and XX, GT or LT options at the same time are not compatible"); }, "EXPIRE e 10 NX GT");
  run(c, "EXPIRE GT LT", [](auto r) { return is_error(r, "ERR GT and LT options at the same time are not compatible"); }, "EXPIRE e 10 GT LT");
  run(c, "EXPIRE bad option", [](auto r) { return is_error(r, "ERR Unsupported option LATER"); }, "EXPIRE e 10 LATER");
  run(c, "DEL after EXPIRE", [](auto r) { return is_int(r, 1); }, "DEL e");
  run(c, "SET binary", [](auto r) { return is_status(r, "OK"); }, "SET %b %b", "k", size_t{1}, "a\0b", size_t{3});
  run(c, "GET binary", [](auto r) { return r->type == REDIS_REPLY_STRING && r->len == 3 && std::memcmp(r->str, "a\0b", 3) == 0; }, "GET k");
  run(c, "SET NX", [](auto r) { return is_nil(r); }, "SET k x NX");
  run(c, "SET EX", [](auto r) { return is_status(r, "OK"); }, "SET t v EX 100");
  run(c, "TTL", [](auto r) { return r->type == REDIS_REPLY_INTEGER && r->integer > 90; }, "TTL t");
  run(c, "PERSIST", [](auto r) { return is_int(r, 1); }, "PERSIST t");
  run(c, "INCRBY", [](auto r) { return is_int(r, 42); }, "INCRBY n 42");
  run(c, "DECR", [](auto r) { return is_int(r, 41); }, "DECR n");
  run(c, "APPEND", [](auto r) { return is_int(r, 3); }, "APPEND s abc");
  run(c, "STRLEN", [](auto r) { return is_int(r, 3); }, "STRLEN s");
  run(c, "GETDEL", [](auto r) { return is_string(r, "abc"); }, "GETDEL s");
  run(c, "MSET", [](auto r) { return is_status(r, "OK"); }, "MSET a 1 b 2");
  run(c, "MGET", [](auto r) { return r->type == REDIS_REPLY_ARRAY && r->elements == 3 && is_nil(r->element[2]); }, "MGET a b zz");
  run(c, "EXISTS", [](auto r) { return is_int(r, 2); }, "EXISTS a b zz");
  run(c, "DEL", [](auto r) { return is_int(r, 1); }, "DEL a");
  run(c, "TYPE", [](auto r) { return is_status(r, "string"); }, "TYPE b");
  run(c, "SCAN", [](auto r) { return r->type == REDIS_REPLY_ARRAY && r->elements == 2; }, "SCAN 0 MATCH * COUNT 100");
  run(c, "KEYS", [](auto r) { return r->type == REDIS_REPLY_ARRAY && r->elements == 4; }, "KEYS *");
  run(c, "DBSIZE", [](auto r) { return is_int(r, 4); }, "DBSIZE");
  run(c, "SELECT", [](auto r) { return is_status(r, "OK"); }, "SELECT 0");
  run(c, "CONFIG GET", [](auto r) { return r->type == REDIS_REPLY_ARRAY && r->elements == 2 && is_string(r->element[1], "always"); }, "CONFIG GET appendfsync");
  run(c, "COMMAND COUNT", [](auto r) { return r->type == REDIS_REPLY_INTEGER && r->integer > 30; }, "COMMAND COUNT");
  run(c, "INFO", [](auto r) { return r->type == REDIS_REPLY_STRING && std::strstr(r->str, "aof_last_write_status:ok"); }, "INFO");
  run(c, "WAITAOF", [](auto r) { return r->type == REDIS_REPLY_ARRAY && r->elements == 2 && is_int(r->element[0], 1); }, "WAITAOF 1 0 0");
  run(c, "unknown", [](auto r) { return is_error(r, "ERR unknown command"); }, "LPUSH l x");
  // A pipeline of 1000 writes, then their replies in order.
  for (int i = 0; i < 1000; ++i) redisAppendCommand(c, "SET p%d %d", i, i);
  for (int i = 0; i < 1000; ++i) {
    void* reply = nullptr;
    if (redisGetReply(c, &reply) != REDIS_OK) {
      ++failures;
      break;
    }
    expect(is_status(static_cast<redisReply*>(reply), "OK"), "pipelined SET", static_cast<redisReply*>(reply));
    freeReplyObject(reply);
  }
  run(c, "GET pipelined", [](auto r) { return is_string(r, "999"); }, "GET p999");
  run(c, "FLUSHALL", [](auto r) { return is_status(r, "OK"); }, "FLUSHALL");
  run(c, "DBSIZE after FLUSHALL", [](auto r) { return is_int(r, 0); }, "DBSIZE");
  redisFree(c);
  if (failures == 0) std::printf("hiredis: every command answered as expected\n");
  return failures == 0 ? 0 : 1;
}
