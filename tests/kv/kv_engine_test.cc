// SPDX-License-Identifier: Apache-2.0
// commitlog-kv on RocksDB: the string, expiry, keyspace, connection and
// server commands; start-up input checked before the replay; an idle start
// and stop; a replay run twice.
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include <algorithm>
#include <fmt/core.h>

#include "tests/support/kv_process.h"
#include "tests/support/log_files.h"
#include "tests/support/run_cli.h"
#include "tests/support/temp_dir.h"

namespace commitlog {
namespace {

using namespace std::chrono_literals;
using testing::Client;
using testing::KvServer;
using testing::Reply;
using testing::info;

TEST_CASE("kv engine: SET's options, the integer commands, APPEND, STRLEN, GETDEL") {
  testing::TempDir tmp;
  KvServer server(tmp.file("data"), {"--policy", "batch"}, tmp.file("kv.out"));
  Client c(server.port());
  CHECK(c.command({"SET", "k", "v", "NX"}).text == "OK");
  CHECK(c.command({"SET", "k", "w", "NX"}).nil);
  CHECK(c.command({"SET", "k", "w", "XX", "GET"}).text == "v");
  CHECK(c.command({"SET", "absent", "x", "XX"}).nil);
  CHECK(c.command({"GET", "absent"}).nil);
  CHECK(c.command({"SET", "k", "x", "NX", "XX"}).text == "ERR syntax error");
  CHECK(c.command({"SET", "k", "x", "EX", "10", "PX", "5"}).text == "ERR syntax error");
  CHECK(c.command({"SET", "k", "x", "EX", "abc"}).text == "ERR value is not an integer or out of range");
  CHECK(c.command({"INCRBY", "n", "10"}).integer == 10);
  CHECK(c.command({"DECR", "n"}).integer == 9);
  CHECK(c.command({"DECRBY", "n", "20"}).integer == -11);
  CHECK(c.command({"INCRBY", "n", "x"}).text == "ERR value is not an integer or out of range");
  for (const char* text : {"007", "-0", "+5", " 5"}) {  // not as Redis writes an integer
    CHECK(c.command({"SET", "odd", text}).text == "OK");
    CHECK(c.command({"INCR", "odd"}).text == "ERR value is not an integer or out of range");
  }
  CHECK(c.command({"SET", "zero", "0"}).text == "OK");
  CHECK(c.command({"INCR", "zero"}).integer == 1);
  CHECK(c.command({"APPEND", "s", "ab"}).integer == 2);
  CHECK(c.command({"APPEND", "s", "cd"}).integer == 4);
  CHECK(c.command({"STRLEN", "s"}).integer == 4);
  CHECK(c.command({"STRLEN", "nope"}).integer == 0);
  CHECK(c.command({"GETDEL", "s"}).text == "abcd");
  CHECK(c.command({"GETDEL", "s"}).nil);
  CHECK(c.command({"TYPE", "k"}).text == "string");
  CHECK(c.command({"TYPE", "s"}).text == "none");
  CHECK(c.command({"SELECT", "0"}).text == "OK");
  CHECK(c.command({"SELECT", "1"}).type == '-');
}

TEST_CASE("kv engine: SET takes a repeated option as Redis 7.0 does - the last expiry wins") {
  testing::TempDir tmp;
  KvServer server(tmp.file("data"), {"--policy", "batch"}, tmp.file("kv.out"));
  Client c(server.port());
  CHECK(c.command({"SET", "k", "v", "NX", "NX"}).text == "OK");
  CHECK(c.command({"SET", "k", "w", "XX", "XX", "GET", "GET"}).text == "v");
  CHECK(c.command({"SET", "k", "x", "NX", "GET"}).text == "w");
  CHECK(c.command({"SET", "k", "v", "EX", "10", "EX", "2000"}).text == "OK");
  CHECK(c.command({"TTL", "k"}).integer > 1000);
  CHECK(c.command({"SET", "k", "v", "KEEPTTL", "KEEPTTL"}).text == "OK");
  CHECK(c.command({"TTL", "k"}).integer > 1000);
  CHECK(c.command({"SET", "k", "v", "PX", "abc", "PX", "5000"}).text == "OK");  // the last is checked
  CHECK(c.command({"PTTL", "k"}).integer > 1000);
  CHECK(c.command({"SET", "k", "v", "EX", "10", "EX", "0"}).text == "ERR invalid expire time in 'set' command");
  for (const std::vector<std::string>& conflict :
       {std::vector<std::string>{"NX", "XX"}, {"XX", "NX"}, {"KEEPTTL", "EX", "10"}, {"EX", "10", "KEEPTTL"},
        {"EX", "10", "PX", "10"}, {"PXAT", "10", "EXAT", "10"}, {"EX", "10", "EX"}}) {
    std::vector<std::string> command = {"SET", "k", "v"};
    command.insert(command.end(), conflict.begin(), conflict.end());
    CAPTURE(conflict);
    CHECK(c.command(command).text == "ERR syntax error");
  }
}

TEST_CASE("kv engine: a numeric argument is an integer only as Redis writes one") {
  testing::TempDir tmp;
  KvServer server(tmp.file("data"), {"--policy", "batch"}, tmp.file("kv.out"));
  Client c(server.port());
  REQUIRE(c.command({"SET", "k", "v"}).text == "OK");
  const std::string refused = "ERR value is not an integer or out of range";
  for (const char* text : {"010", "-0", "+5", " 5", "5 ", "00", ""}) {
    CAPTURE(text);
    CHECK(c.command({"SET", "k", "v", "EX", text}).text == refused);
    CHECK(c.command({"INCRBY", "n", text}).text == refused);
    CHECK(c.command({"DECRBY", "n", text}).text == refused);
    CHECK(c.command({"EXPIRE", "k", text}).text == refused);
    CHECK(c.command({"SCAN", "0", "COUNT", text}).text == refused);
    CHECK(c.command({"WAITAOF", text, "0", "0"}).text == refused);
    CHECK(c.command({"HELLO", text}).text == "ERR Protocol version is not an integer or out of range");
  }
  CHECK(c.command({"INCRBY", "n", "-5"}).integer == -5);
  CHECK(c.command({"INCRBY", "n", "0"}).integer == -5);
  CHECK(c.command({"INCRBY", "n", "-9223372036854775808"}).text == "ERR increment or decrement would overflow");
  CHECK(c.command({"TTL", "k"}).integer == -1);
}

TEST_CASE("kv engine: expiry is never returned, TTL and PERSIST, KEEPTTL") {
  testing::TempDir tmp;
  KvServer server(tmp.file("data"), {"--policy", "batch"}, tmp.file("kv.out"));
  Client c(server.port());
  CHECK(c.command({"SET", "short", "v", "PX", "50"}).text == "OK");
  CHECK(c.command({"SET", "long", "v", "EX", "1000"}).text == "OK");
  CHECK(c.command({"SET", "plain", "v"}).text == "OK");
  CHECK(c.command({"TTL", "plain"}).integer == -1);
  CHECK(c.command({"TTL", "nope"}).integer == -2);
  CHECK(c.command({"TTL", "long"}).integer > 990);
  CHECK(c.command({"PTTL", "long"}).integer > 990'000);
  CHECK(c.command({"SET", "long", "w", "KEEPTTL"}).text == "OK");
  CHECK(c.command({"TTL", "long"}).integer > 990);
  CHECK(c.command({"PERSIST", "long"}).integer == 1);
  CHECK(c.command({"PERSIST", "long"}).integer == 0);
  CHECK(c.command({"TTL", "long"}).integer == -1);
  CHECK(c.command({"EXPIRE", "plain", "100"}).integer == 1);
  CHECK(c.command({"TTL", "plain"}).integer > 90);
  CHECK(c.command({"PEXPIRE", "nope", "100"}).integer == 0);
  CHECK(c.command({"EXPIRE", "plain", "0"}).integer == 1);  // in the past: deleted
  CHECK(c.command({"EXISTS", "plain"}).integer == 0);
  // The clock, not a fixed sleep, decides: wait until the key is gone.
  Reply r = c.command({"GET", "short"});
  for (int i = 0; i < 200 && !r.nil; ++i) {
    std::this_thread::sleep_for(10ms);
    r = c.command({"GET", "short"});
  }
  CHECK(r.nil);
  CHECK(c.command({"EXISTS", "short"}).integer == 0);
  CHECK(c.command({"TTL", "short"}).integer == -2);
  CHECK(c.command({"DBSIZE"}).integer == 1);
}

TEST_CASE("kv engine: SCAN with MATCH and COUNT visits every key once, KEYS, FLUSHALL") {
  testing::TempDir tmp;
  KvServer server(tmp.file("data"), {"--policy", "batch"}, tmp.file("kv.out"));
  Client c(server.port());
  for (int i = 0; i < 250; ++i)
    REQUIRE(c.command({"SET", fmt::format("{}:{}", i % 2 ? "odd" : "even", i), "v"}).text == "OK");
  std::set<std::string> seen;
  std::string cursor = "0";
  int calls = 0;
  do {
    const Reply r = c.command({"SCAN", cursor, "MATCH", "odd:*", "COUNT", "20"});
    REQUIRE(r.elements.size() == 2);
    cursor = r.elements[0].text;
    for (const Reply& k : r.elements[1].elements) CHECK(seen.insert(k.text).second);
    ++calls;
  } while (cursor != "0" && calls < 100);
  CHECK(seen.size() == 125);
  CHECK(calls >= 12);
  CHECK(c.command({"SCAN", "77777"}).text == "ERR invalid cursor");
  CHECK(c.command({"KEYS", "even:1?"}).elements.size() == 5);
  CHECK(c.command({"KEYS", "*"}).elements.size() == 250);
  CHECK(c.command({"FLUSHALL"}).text == "OK");
  CHECK(c.command({"DBSIZE"}).integer == 0);
  CHECK(c.command({"KEYS", "*"}).elements.empty());
}

TEST_CASE("kv engine: SCAN returns the empty key once and ends - an empty pattern matches it alone") {
  testing::TempDir tmp;
  KvServer server(tmp.file("data"), {"--policy", "batch"}, tmp.file("kv.out"));
  Client c(server.port());
  for (const char* key : {"", "a", "z"}) REQUIRE(c.command({"SET", key, "v"}).text == "OK");
  std::vector<std::string> seen;
  std::string cursor = "0";
  int calls = 0;
  do {
    const Reply r = c.command({"SCAN", cursor, "COUNT", "1"});
    REQUIRE(r.elements.size() == 2);
    cursor = r.elements[0].text;
    for (const Reply& k : r.elements[1].elements) seen.push_back(k.text);
    ++calls;
  } while (cursor != "0" && calls < 10);
  CHECK(cursor == "0");
  CHECK(seen == std::vector<std::string>{"", "a", "z"});
  const auto keys = [&](const std::vector<std::string>& command) {
    const Reply r = c.command(command);
    const std::vector<Reply>& list = command[0] == "SCAN" ? r.elements.at(1).elements : r.elements;
    std::set<std::string> found;
    for (const Reply& k : list) found.insert(k.text);
    return found;
  };
  CHECK(keys({"KEYS", ""}) == std::set<std::string>{""});
  CHECK(keys({"SCAN", "0", "MATCH", ""}) == std::set<std::string>{""});
  CHECK(keys({"KEYS", "*"}) == std::set<std::string>{"", "a", "z"});
  CHECK(keys({"SCAN", "0", "MATCH", "*"}) == std::set<std::string>{"", "a", "z"});
  CHECK(keys({"KEYS", "**"}) == std::set<std::string>{"a", "z"});  // Redis's glob: "*" alone is all
}

TEST_CASE("kv engine: a SCAN cursor of an earlier run is refused, not resumed from another client's position") {
  testing::TempDir tmp;
  const std::string dir = tmp.file("data");
  std::string stale;
  {
    KvServer server(dir, {"--policy", "batch"}, tmp.file("kv1.out"));
    Client c(server.port());
    for (int i = 0; i < 30; ++i) REQUIRE(c.command({"SET", fmt::format("key{:02}", i), "v"}).text == "OK");
    const Reply r = c.command({"SCAN", "0", "COUNT", "5"});
    REQUIRE(r.elements.size() == 2);
    stale = r.elements[0].text;
    REQUIRE(stale != "0");
  }
  KvServer again(dir, {"--policy", "batch"}, tmp.file("kv2.out"));
  Client other(again.port());
  const Reply fresh = other.command({"SCAN", "0", "COUNT", "20"});
  REQUIRE(fresh.elements.size() == 2);
  CHECK(fresh.elements[0].text != stale);
  Client c(again.port());
  CHECK(c.command({"SCAN", stale}).text == "ERR invalid cursor");
}

TEST_CASE("kv engine: SCAN cursors naming long keys are forgotten, oldest first, past 64 MiB of keys") {
  testing::TempDir tmp;
  KvServer server(tmp.file("data"), {"--policy", "batch"}, tmp.file("kv.out"));
  Client c(server.port());
  const std::string a(7u << 20, 'a'), b(7u << 20, 'b');
  REQUIRE(c.command({"SET", a, "1"}).text == "OK");
  REQUIRE(c.command({"SET", b, "2"}).text == "OK");
  std::vector<std::string> cursors;
  for (int i = 0; i < 10; ++i) {  // each cursor holds the 7 MiB key it stopped at
    const Reply r = c.command({"SCAN", "0", "COUNT", "1"});
    REQUIRE(r.elements.size() == 2);
    cursors.push_back(r.elements[0].text);
  }
  CHECK(c.command({"SCAN", cursors.front()}).text == "ERR invalid cursor");
  const Reply last = c.command({"SCAN", cursors.back()});
  REQUIRE(last.elements.size() == 2);
  CHECK(last.elements[0].text == "0");
  REQUIRE(last.elements[1].elements.size() == 1);
  CHECK(last.elements[1].elements[0].text == b);
}

TEST_CASE("kv engine: CLIENT, COMMAND, CONFIG GET, INFO fields, WAITAOF, SHUTDOWN") {
  testing::TempDir tmp;
  KvServer server(tmp.file("data"), {"--policy", "batch"}, tmp.file("kv.out"));
  Client c(server.port());
  CHECK(c.command({"CLIENT", "SETNAME", "me"}).text == "OK");
  CHECK(c.command({"CLIENT", "GETNAME"}).text == "me");
  CHECK(c.command({"CLIENT", "SETNAME", "a b"}).type == '-');
  CHECK(c.command({"CLIENT", "SETINFO", "LIB-NAME", "x"}).text == "OK");
  CHECK(c.command({"CLIENT", "ID"}).integer > 0);
  CHECK(c.command({"CLIENT", "LIST"}).text.find("name=me") != std::string::npos);
  CHECK(c.command({"COMMAND", "COUNT"}).integer > 30);
  CHECK(c.command({"COMMAND", "COUNT", "x"}).text == "ERR wrong number of arguments for 'command|count' command");
  CHECK(c.command({"CONFIG", "GET"}).text == "ERR wrong number of arguments for 'config|get' command");
  CHECK(c.command({"CONFIG", "resetstat", "x"}).text ==
        "ERR wrong number of arguments for 'config|resetstat' command");
  const Reply named = c.command({"CONFIG", "GET", "APPENDFSYNC", "appendFsync", "append*"});
  REQUIRE(named.elements.size() == 4);  // each setting once, a name echoed as given
  CHECK(named.elements[0].text == "APPENDFSYNC");
  CHECK(named.elements[2].text == "appendonly");
  CHECK(c.command({"COMMAND", "DOCS"}).elements.empty());
  const Reply fsync = c.command({"CONFIG", "GET", "appendfsync"});
  REQUIRE(fsync.elements.size() == 2);
  CHECK(fsync.elements[1].text == "always");
  CHECK(c.command({"CONFIG", "GET", "save", "appendonly"}).elements.size() == 4);
  CHECK(c.command({"SET", "k", "v"}).text == "OK");
  const Reply w = c.command({"WAITAOF", "1", "0", "0"});
  REQUIRE(w.elements.size() == 2);
  CHECK(w.elements[0].integer == 1);
  const auto p = info(c, "persistence");
  CHECK(p.at("loading") == "0");
  CHECK(p.at("aof_last_write_status") == "ok");
  CHECK(p.at("kv_engine") == "rocksdb");
  CHECK(std::stoll(info(c, "memory").at("used_memory")) > 0);
  CHECK(c.command({"INFO"}).text.find("db0:keys=1") != std::string::npos);
  const auto periodic = KvServer(tmp.file("data2"), {"--policy", "periodic"}, tmp.file("kv2.out"));
  Client p2(periodic.port());
  CHECK(p2.command({"CONFIG", "GET", "appendfsync"}).elements.at(1).text == "everysec");
  REQUIRE(c.send(Client::encode({"SHUTDOWN"})));
  CHECK(c.closed_by_server());
  const int status = server.stop();
  CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
  // The log says who stopped it, not a signal it did not get.
  CHECK_MESSAGE(server.output().find("commitlog-kv: SHUTDOWN from client 127.0.0.1:") != std::string::npos,
                server.output());
  CHECK(server.output().find("SIGTERM received") == std::string::npos);
}

TEST_CASE("kv engine: bad options, directory or port exit 2 with one line, before any replay") {
  testing::TempDir tmp;
  std::filesystem::create_directories(tmp.file("data/commitlog"));
  std::ofstream(tmp.file("data/commitlog/CommitLog-2-1.log")) << "not a segment";
  std::ofstream(tmp.file("file")) << "x";
  struct Case {
    std::vector<std::string> args;
    std::string names;
  };
  const std::string config = tmp.file("bad.yaml");
  std::ofstream(config) << "commitlog_segment_size: 1KiB\n";
  const std::vector<Case> cases = {
      {{"--dir", tmp.file("data"), "--policy", "nonsense"}, "nonsense"},
      {{"--dir", tmp.file("file") + "/sub"}, "--dir"},
      {{"--dir", tmp.file("data"), "--bind", "256.1.1.1", "--port", "0"}, "--bind"},
      {{"--dir", tmp.file("data"), "--config", config}, "segment"},
      {{"--dir", tmp.file("data"), "--bind", "1.2.3"}, "not an IPv4 or IPv6 address"},
      {{"--dir", tmp.file("data"), "--timeout", "nan"}, "--timeout"},
      {{"--dir", tmp.file("data"), "--timeout", "0.0001"}, "--timeout"},
      {{"--dir", tmp.file("data"), "--client-query-buffer-limit", "1"}, "--client-query-buffer-limit"},
      {{"--dir", tmp.file("data"), "--client-query-buffer-limit", "100gb"}, "--client-query-buffer-limit"},
  };
  for (const Case& k : cases) {
    CAPTURE(k.args);
    const testing::CliResult r = testing::run_cli(testing::kv_binary(), k.args);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(k.names) != std::string::npos);
    CHECK(r.out.find("replaying") == std::string::npos);
  }
  // Direct I/O where the file system has none: refused before the replay
  // too, not by the log's open after it.
  if (std::filesystem::is_directory("/dev/shm")) {
    const std::string shm = "/dev/shm/commitlog-kv-engine-test-" + std::to_string(::getpid());
    std::filesystem::create_directories(shm + "/commitlog");
    std::filesystem::copy_file(tmp.file("data/commitlog/CommitLog-2-1.log"), shm + "/commitlog/CommitLog-2-1.log");
    std::ofstream(tmp.file("direct.yaml")) << "commitlog_disk_access_mode: direct\n";
    const testing::CliResult r =
        testing::run_cli(testing::kv_binary(), {"--dir", shm, "--config", tmp.file("direct.yaml"), "--port", "0"});
    std::filesystem::remove_all(shm);
    CHECK(r.exit_code == 2);
    CHECK_MESSAGE(r.err.find("commitlog_disk_access_mode (direct): direct I/O in " + shm) != std::string::npos, r.err);
    CHECK(r.out.find("replaying") == std::string::npos);
  }
}

TEST_CASE("kv engine: an idle start and stop leaves no new segment behind") {
  testing::TempDir tmp;
  const std::string dir = tmp.file("data");
  {
    KvServer server(dir, {"--policy", "batch"}, tmp.file("kv0.out"));
    Client c(server.port());
    CHECK(c.command({"SET", "k", "v"}).text == "OK");
    CHECK(server.stop() == 0);
  }
  auto ids = [&] {
    std::vector<uint64_t> out;
    for (const SegmentFile& f : testing::segment_files(dir + "/commitlog")) out.push_back(f.id);
    return out;
  };
  const std::vector<uint64_t> before = ids();
  for (int i = 0; i < 3; ++i) {
    KvServer server(dir, {"--policy", "batch"}, tmp.file(fmt::format("kv{}.out", i + 1)));
    CHECK(server.stop() == 0);
    // No file this run made is left: the segments are some of those before.
    for (uint64_t id : ids()) CHECK(std::find(before.begin(), before.end(), id) != before.end());
  }
  KvServer server(dir, {"--policy", "batch"}, tmp.file("kv9.out"));
  Client c(server.port());
  CHECK(c.command({"GET", "k"}).text == "v");
}

TEST_CASE("kv engine: a replay interrupted by kill -9 and run again changes nothing") {
  testing::TempDir tmp;
  const std::string dir = tmp.file("data");
  const std::vector<std::string> flags = {"--policy", "batch", "--memtable-size", "64kb"};
  {
    KvServer server(dir, flags, tmp.file("kv1.out"));
    Client c(server.port());
    std::string pipeline;
    for (int i = 0; i < 2000; ++i) {
      pipeline += Client::encode({"SET", fmt::format("k{}", i % 300), fmt::format("v{}", i)});
      if (i % 7 == 0) pipeline += Client::encode({"INCR", "counter"});
      if (i % 11 == 0) pipeline += Client::encode({"APPEND", "text", "x"});
    }
    pipeline += Client::encode({"DEL", "k1"});
    REQUIRE(c.send(pipeline));
    for (int i = 0; i < 2000 + 286 + 182 + 1; ++i) REQUIRE(c.read_reply().type != 0);
    server.kill9();
  }
  auto check = [&](const std::string& out) {
    KvServer server(dir, flags, tmp.file(out));
    Client c(server.port());
    CHECK(c.command({"GET", "counter"}).text == "286");
    CHECK(c.command({"STRLEN", "text"}).integer == 182);
    CHECK(c.command({"GET", "k1"}).nil);
    CHECK(c.command({"GET", "k299"}).text == "v1799");
    CHECK(c.command({"DBSIZE"}).integer == 301);
    server.kill9();  // RocksDB holds the replay in memtables only: the next start replays again
  };
  check("kv2.out");
  check("kv3.out");
}

}  // namespace
}  // namespace commitlog
