// SPDX-License-Identifier: Apache-2.0
// commitlog-kv (tools/kv/, docs/kv.md) driven as a process over a loopback
// socket by a tiny RESP client: every command, protocol errors, oversized
// values, abrupt disconnects, restart after kill -9 (replay), RocksDB flushes
// and discards, and a kill -9 during a write load that must lose no +OK.
// Skipped when build/bin/commitlog-kv was not built.
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <doctest/doctest.h>
#include <fmt/core.h>

#include "tests/support/kv_process.h"
#include "tests/support/log_files.h"
#include "tests/support/run_cli.h"
#include "tests/support/temp_dir.h"
#include "tests/support/thread_names.h"

namespace commitlog {
namespace {

using namespace std::chrono_literals;

using testing::Client;
using testing::KvServer;
using testing::Reply;
using testing::info;

std::string write_config(const testing::TempDir& tmp, const std::string& yaml) {
  const std::string path = tmp.file("commitlog.yaml");
  std::ofstream(path) << yaml;
  return path;
}

// ---------------------------------------------------------------------------

TEST_CASE("kv: every command docs/kv.md lists, and errors for the rest") {
  testing::TempDir tmp;
  KvServer server(tmp.file("data"), {"--policy", "batch"}, tmp.file("kv.out"));
  Client c(server.port());

  CHECK(c.command({"PING"}).text == "PONG");
  CHECK(c.command({"ping", "hello"}).text == "hello");
  CHECK(c.command({"ECHO", "a\r\nb"}).text == "a\r\nb");
  CHECK(c.command({"SET", "k", "v1"}).text == "OK");
  CHECK(c.command({"GET", "k"}).text == "v1");
  CHECK(c.command({"set", "k", std::string("bin\0ary", 7)}).text == "OK");
  CHECK(c.command({"GET", "k"}).text == std::string("bin\0ary", 7));
  CHECK(c.command({"GET", "missing"}).nil);
  CHECK(c.command({"INCR", "n"}).integer == 1);
  CHECK(c.command({"INCR", "n"}).integer == 2);
  CHECK(c.command({"SET", "big", "9223372036854775807"}).text == "OK");
  CHECK(c.command({"INCR", "big"}).text == "ERR increment or decrement would overflow");
  CHECK(c.command({"INCR", "k"}).text == "ERR value is not an integer or out of range");
  CHECK(c.command({"MSET", "a", "1", "b", "2", "a", "3"}).text == "OK");
  const Reply mget = c.command({"MGET", "a", "b", "nope"});
  REQUIRE(mget.elements.size() == 3);
  CHECK(mget.elements[0].text == "3");
  CHECK(mget.elements[1].text == "2");
  CHECK(mget.elements[2].nil);
  CHECK(c.command({"EXISTS", "a", "b", "nope", "a"}).integer == 3);
  CHECK(c.command({"DBSIZE"}).integer == 5);
  CHECK(c.command({"DEL", "a", "nope", "a"}).integer == 1);
  CHECK(c.command({"DEL", "nope"}).integer == 0);
  CHECK(c.command({"DBSIZE"}).integer == 4);

  const auto fields = info(c, "commitlog");
  CHECK(fields.count("commitlog_flushes") == 1);
  CHECK(fields.count("commitlog_seal_waits") == 1);
  CHECK(fields.count("commitlog_spins") == 1);
  CHECK(fields.at("commitlog_sync") == "batch");
  CHECK(std::stoll(fields.at("commitlog_flushed_mutations")) >= 7);
  CHECK(c.command({"INFO"}).text.find("# Keyspace\r\ndb0:keys=4,expires=0,") != std::string::npos);
  // Keys with an expiry are counted as Redis counts them for exporters.
  CHECK(c.command({"EXPIRE", "b", "1000"}).integer == 1);
  const Reply keyspace = c.command({"INFO", "keyspace"});
  CHECK_MESSAGE(keyspace.text.find("db0:keys=4,expires=1,") != std::string::npos, keyspace.text);
  CHECK(c.command({"PERSIST", "b"}).integer == 1);

  const Reply unknown = c.command({"LPUSH", "x"});
  CHECK(unknown.type == '-');
  CHECK(unknown.text == "ERR unknown command 'LPUSH', with args beginning with: 'x' ");
  CHECK(c.command({"GET"}).text == "ERR wrong number of arguments for 'get' command");
  CHECK(c.command({"MSET", "a", "1", "b"}).text ==
        "ERR wrong number of arguments for 'mset' command");
  CHECK(c.command({"SET", "a", "1", "EX", "0"}).text == "ERR invalid expire time in 'set' command");
  // Inline commands, as telnet sends them, and pipelining.
  REQUIRE(c.send("PING\r\nSET inline  value\r\nGET inline\r\nSET \"a b\" 'it\\'s'\r\nGET \"a\\x20b\"\r\n"));
  CHECK(c.read_reply().text == "PONG");
  CHECK(c.read_reply().text == "OK");
  CHECK(c.read_reply().text == "value");
  CHECK(c.read_reply().text == "OK");
  CHECK(c.read_reply().text == "it's");
  CHECK(c.command({"QUIT"}).text == "OK");
  CHECK(c.closed_by_server());
  CHECK(server.alive());
}

TEST_CASE("kv: INFO commitlog says whether the log failed, its access mode and mutations per flush") {
  testing::TempDir tmp;
  KvServer server(tmp.file("data"), {"--policy", "batch"}, tmp.file("kv.out"));
  Client c(server.port());
  for (int i = 0; i < 5; ++i) REQUIRE(c.command({"SET", fmt::format("k{}", i), "v"}).text == "OK");
  const auto fields = info(c, "commitlog");
  CHECK(fields.at("commitlog_failed") == "0");
  CHECK(fields.at("commitlog_failure") == "none");
  const std::set<std::string> modes = {"mmap", "standard", "direct"};
  CHECK(modes.count(fields.at("commitlog_disk_access_mode")) == 1);
  CHECK(fields.at("commitlog_disk_access_mode_setting") == "legacy");
  CHECK(std::stod(fields.at("commitlog_mutations_per_flush")) >= 1.0);
  // Every line a "# Section" heading, "name:value", or the empty one after a section.
  std::istringstream text(c.command({"INFO", "everything"}).text);
  for (std::string line; std::getline(text, line);) {
    CAPTURE(line);
    REQUIRE(line.ends_with('\r'));
    line.pop_back();
    const size_t colon = line.find(':');
    CHECK((line.empty() || line.starts_with("# ") ||
           (colon != std::string::npos && colon > 0 &&
            line.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") == colon)));
  }
}

TEST_CASE("kv: a --memtable-size over a quarter of commitlog_total_space is lowered, saying so") {
  testing::TempDir tmp;
  const std::string config = write_config(tmp, "commitlog_total_space: 64MiB\n");
  {
    KvServer server(tmp.file("data"), {"--config", config, "--memtable-size", "64mb"}, tmp.file("kv.out"));
    Client c(server.port());
    CHECK(info(c, "persistence").at("kv_rocksdb_memtable_limit") == std::to_string(16 << 20));
    CHECK_MESSAGE(server.output().find("commitlog-kv: warning: --memtable-size 64mb is over a quarter of "
                                       "commitlog_total_space (64mb): using 16mb, so that RocksDB flushes before "
                                       "the log is over its space\n") != std::string::npos,
                  server.output());
  }
  // The default is lowered as its help says, without a word; a value that fits is taken as given.
  for (const std::vector<std::string>& flags :
       {std::vector<std::string>{"--config", config}, {"--config", config, "--memtable-size", "16mb"}}) {
    KvServer server(tmp.file("data"), flags, tmp.file("kv2.out"));
    Client c(server.port());
    CHECK(info(c, "persistence").at("kv_rocksdb_memtable_limit") == std::to_string(16 << 20));
    CHECK(server.output().find("--memtable-size") == std::string::npos);
  }
}

TEST_CASE("kv: the server spins only when its config says so") {
  testing::TempDir tmp;
  const auto spin_wait_us = [&](const std::vector<std::string>& flags, const std::string& name) {
    KvServer server(tmp.file(name), flags, tmp.file(name + ".out"));
    Client c(server.port());
    CHECK(server.output().find("commitlog_ext_spin_wait") != std::string::npos);
    return info(c, "commitlog")["commitlog_spin_wait_us"];
  };
  CHECK(spin_wait_us({}, "none") == "0");
  CHECK(spin_wait_us({"--config", write_config(tmp, "commitlog_sync: batch\n")}, "unset") == "0");
  CHECK(spin_wait_us({"--config", write_config(tmp, "commitlog_ext_spin_wait: 0ms\n")}, "off") ==
        "0");
  CHECK(spin_wait_us({"--config", write_config(tmp, "commitlog_ext_spin_wait: 1ms\n")}, "one") ==
        "1000");
}

TEST_CASE(
    "kv: the server runs adaptive unless its config or --policy names a policy, and says why") {
  testing::TempDir tmp;
  // "<INFO's commitlog_sync> | <the start line's commitlog_sync (why)>".
  const auto policy = [&](const std::vector<std::string>& flags, const std::string& name) {
    KvServer server(tmp.file(name), flags, tmp.file(name + ".out"));
    Client c(server.port());
    const std::string out = server.output();
    const size_t begin = out.find("(commitlog_sync ");
    REQUIRE_MESSAGE(begin != std::string::npos, out);
    const size_t end = out.find("),", begin);
    REQUIRE_MESSAGE(end != std::string::npos, out);
    return info(c, "commitlog")["commitlog_sync"] + " | " + out.substr(begin + 16, end + 1 - begin - 16);
  };
  CHECK(policy({}, "none") == "adaptive | adaptive (commitlog-kv's default)");
  const std::string no_sync = write_config(tmp, "commitlog_segment_size: 1MiB\n");
  CHECK(policy({"--config", no_sync}, "unset") == "adaptive | adaptive (commitlog-kv's default)");
  const std::string group =
      write_config(tmp, "# a comment\ncommitlog_sync: group\ncommitlog_sync_group_window: 2ms\n");
  CHECK(policy({"--config", group}, "group") == "group | group (" + group + ":2)");
  CHECK(policy({"--config", group, "--policy", "batch"}, "flag") == "batch | batch (--policy)");
}

TEST_CASE("kv: the start line says which disk access mode is in effect and why") {
  testing::TempDir tmp;
  const auto start_line = [&](const std::string& yaml, const std::string& name) {
    KvServer server(tmp.file(name), {"--config", write_config(tmp, yaml)}, tmp.file(name + ".out"));
    return server.output();
  };
  CHECK(start_line("commitlog_segment_size: 1MiB\n", "legacy")
            .find("commitlog_disk_access_mode mmap (legacy: as commitlog_compression is not set)") !=
        std::string::npos);
  CHECK(start_line("commitlog_disk_access_mode: direct\n", "direct").find("commitlog_disk_access_mode direct,") !=
        std::string::npos);
  CHECK(start_line("commitlog_disk_access_mode: auto\n", "auto")
            .find("commitlog_disk_access_mode direct (auto: as O_DIRECT works in ") != std::string::npos);
}

TEST_CASE("kv: the server's threads carry names that ps, top and perf show") {
  testing::TempDir tmp;
  KvServer server(tmp.file("data"), {"--threads", "2"}, tmp.file("out"));
  Client c(server.port());
  CHECK(c.command({"PING"}).text == "PONG");  // the workers have started serving
  const std::set<std::string> threads = {"kv-worker-0", "kv-worker-1", "kv-flusher", "cl-sync"};
  const std::set<std::string> names = testing::thread_names(server.pid(), threads);
  for (const std::string& name : threads) CHECK_MESSAGE(names.count(name) == 1, name);
}

TEST_CASE("kv: malformed input gets a protocol error and the server lives on") {
  testing::TempDir tmp;
  KvServer server(tmp.file("data"), {"--policy", "batch"}, tmp.file("kv.out"));
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"*abc\r\n", "invalid multibulk length"},
      {"*99999999999\r\n", "invalid multibulk length"},
      {"*01\r\n$4\r\nPING\r\n", "invalid multibulk length"},
      {"*1\r\n$04\r\nPING\r\n", "invalid bulk length"},
      {"ECHO \"abc\r\nPING\r\n", "unbalanced quotes in request"},
      {"*2\r\n$3\r\nGET\r\n$-7\r\n", "invalid bulk length"},
      {"*1\r\nxyz\r\n", "expected '$', got 'x'"},
      {"*1\r\n$4\r\nPINGXY\r\n", "bulk not followed by CRLF"},
      {"*1\r\n$99999999999999999999999\r\n", "invalid bulk length"},
      {std::string(70000, 'a'), "too big inline request"},
      {std::string("*1\r\n$") + std::string(70000, '9'), "too big bulk length line"},
  };
  for (const auto& malformed : cases) {
    const std::string& input = malformed.first;
    const std::string& expected = malformed.second;
    INFO("input: " << input.substr(0, 40));
    Client c(server.port());
    REQUIRE(c.send(input));
    const Reply r = c.read_reply();
    CHECK(r.type == '-');
    CHECK(r.text.starts_with("ERR Protocol error"));
    CHECK(r.text.find(expected) != std::string::npos);
    CHECK(c.closed_by_server());
  }
  // Bytes that are no protocol at all: an inline command nobody knows.
  {
    Client c(server.port());
    REQUIRE(c.send(std::string("\x01\xff\x7f garbage\r\n", 13)));
    const Reply r = c.read_reply();
    CHECK(r.type == '-');
    CHECK(r.text.starts_with("ERR unknown command '?\?\?'"));
  }
  Client after(server.port());
  CHECK(after.command({"PING"}).text == "PONG");
  CHECK(server.alive());
  CHECK(std::stoll(info(after, "stats").at("total_protocol_errors")) ==
        static_cast<int64_t>(cases.size()));
}

TEST_CASE("kv: oversized values are refused") {
  testing::TempDir tmp;
  const std::string config = write_config(tmp,
                                          "commitlog_sync: batch\n"
                                          "commitlog_segment_size: 1MiB\n"
                                          "max_mutation_size: 64KiB\n");
  KvServer server(tmp.file("data"), {"--config", config}, tmp.file("kv.out"));
  Client c(server.port());
  // Fits the protocol's limit but not the log's once encoded: refused, the
  // connection stays.
  const Reply r = c.command({"SET", "k", std::string(64 * 1024 - 4, 'x')});
  CHECK(r.type == '-');
  CHECK(r.text.find("exceeds max_mutation_size") != std::string::npos);
  CHECK(c.command({"MSET", "a", std::string(40000, 'a'), "b", std::string(40000, 'b')}).type ==
        '-');
  CHECK(c.command({"GET", "k"}).nil);
  CHECK(c.command({"GET", "a"}).nil);
  CHECK(c.command({"SET", "k", std::string(60000, 'y')}).text == "OK");
  CHECK(c.command({"GET", "k"}).text.size() == 60000);
  // Declared larger than any value can be: a protocol error before the
  // bytes arrive, and the connection closes.
  Client big(server.port());
  REQUIRE(big.send("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$10000000\r\n"));
  const Reply refused = big.read_reply();
  CHECK(refused.text.find("Protocol error: bulk length 10000000 exceeds the maximum") !=
        std::string::npos);
  CHECK(big.closed_by_server());
  CHECK(c.command({"GET", "k"}).text.size() == 60000);
  CHECK(server.alive());
}

TEST_CASE("kv: abrupt disconnects neither crash the server nor lose an acknowledged write") {
  testing::TempDir tmp;
  const std::string dir = tmp.file("data");
  {
    KvServer server(dir, {"--policy", "batch"}, tmp.file("kv1.out"));
    {
      Client half(server.port());  // half a request, then gone
      REQUIRE(half.send("*3\r\n$3\r\nSET\r\n$1\r\nh\r\n$5\r\nhal"));
    }
    {
      Client hasty(server.port());  // a write, gone before the reply
      REQUIRE(hasty.send(Client::encode({"SET", "hasty", "1"})));
    }
    {
      Client reset(server.port());  // a pipeline, then a TCP reset
      std::string pipeline;
      for (int i = 0; i < 200; ++i) pipeline += Client::encode({"SET", fmt::format("p{}", i), "v"});
      REQUIRE(reset.send(pipeline));
      reset.reset();
    }
    Client c(server.port());
    CHECK(c.command({"SET", "acked", "yes"}).text == "OK");
    CHECK(c.command({"GET", "h"}).nil);
    CHECK(c.command({"PING"}).text == "PONG");
    CHECK(server.alive());
    server.kill9();
  }
  KvServer again(dir, {"--policy", "batch"}, tmp.file("kv2.out"));
  Client c(again.port());
  CHECK(c.command({"GET", "acked"}).text == "yes");
  CHECK(c.command({"GET", "h"}).nil);
}

TEST_CASE("kv: a restart replays the log into the table") {
  testing::TempDir tmp;
  const std::string dir = tmp.file("data");
  {
    KvServer server(dir, {"--policy", "batch"}, tmp.file("kv1.out"));
    Client c(server.port());
    std::string pipeline;
    for (int i = 0; i < 300; ++i)
      pipeline += Client::encode({"SET", fmt::format("key{}", i), fmt::format("v{}", i)});
    for (int i = 0; i < 50; ++i) pipeline += Client::encode({"INCR", "counter"});
    pipeline += Client::encode({"DEL", "key0", "key1", "nope"});
    pipeline += Client::encode({"MSET", "key2", "changed", "m", "x"});
    REQUIRE(c.send(pipeline));
    for (int i = 0; i < 300 + 50 + 2; ++i) REQUIRE(c.read_reply().type != 0);
    server.kill9();
  }
  KvServer again(dir, {"--policy", "batch"}, tmp.file("kv2.out"));
  CHECK(again.output().find("replayed 352 mutations") != std::string::npos);
  Client c(again.port());
  CHECK(c.command({"GET", "counter"}).text == "50");
  CHECK(c.command({"EXISTS", "key0", "key1"}).integer == 0);
  CHECK(c.command({"GET", "key2"}).text == "changed");
  CHECK(c.command({"GET", "key299"}).text == "v299");
  CHECK(c.command({"DBSIZE"}).integer == 300 - 2 + 2);
  CHECK(info(c, "persistence").at("kv_startup_replayed_mutations") == "352");
}

TEST_CASE("kv: RocksDB flushes discard the log, which stays bounded, and a restart replays only the rest") {
  testing::TempDir tmp;
  const std::string dir = tmp.file("data");
  // Small segments and a small log limit: the log asks RocksDB to flush.
  const std::string config = write_config(tmp,
                                          "commitlog_sync: batch\n"
                                          "commitlog_segment_size: 1MiB\n"
                                          "commitlog_total_space: 3MiB\n");
  const std::string value(8000, 'v');
  const std::vector<std::string> flags = {"--config", config, "--memtable-size", "1mb"};
  size_t most_segments = 0;
  {
    KvServer server(dir, flags, tmp.file("kv1.out"));
    Client c(server.port());
    for (int round = 0; round < 12; ++round) {
      std::string pipeline;
      for (int i = 0; i < 100; ++i)
        pipeline += Client::encode({"SET", fmt::format("key{}", round * 100 + i), value});
      REQUIRE(c.send(pipeline));
      for (int i = 0; i < 100; ++i) REQUIRE(c.read_reply().text == "OK");
      most_segments = std::max(most_segments, testing::segment_files(dir + "/commitlog").size());
    }
    // 9.6 MB went through segments of 1 MiB; discards run on the log's
    // lifecycle thread, so wait for the count to settle.
    size_t segments = testing::segment_files(dir + "/commitlog").size();
    for (int tries = 0; tries < 500 && segments > 4; ++tries) {
      std::this_thread::sleep_for(20ms);
      segments = testing::segment_files(dir + "/commitlog").size();
    }
    const auto p = info(c, "persistence");
    CHECK(std::stoll(p.at("kv_rocksdb_flushes")) >= 1);
    CHECK(std::stoll(p.at("kv_log_discards")) >= 1);
    CHECK(segments <= 4);
    CHECK(c.command({"SET", "after", "1"}).text == "OK");
    CHECK(c.command({"DEL", "key5"}).integer == 1);
    CHECK(c.command({"INCR", "key6"}).type == '-');
    server.kill9();
  }
  MESSAGE("most segments seen while writing: " << most_segments);
  CHECK(most_segments <= 3 + 2);  // the limit plus the active and a preallocated one
  KvServer again(dir, flags, tmp.file("kv2.out"));
  const std::string out = again.output();
  INFO(out);
  Client c(again.port());
  const auto p = info(c, "persistence");
  CHECK(p.at("kv_startup_checkpoint") != "none");
  CHECK(std::stoll(p.at("kv_startup_replayed_mutations")) < 1200);
  CHECK(c.command({"DBSIZE"}).integer == 1200);
  CHECK(c.command({"GET", "after"}).text == "1");
  CHECK(c.command({"GET", "key5"}).nil);
  CHECK(c.command({"GET", "key1199"}).text == value);
  // A clean stop flushes RocksDB; the next start replays nothing.
  CHECK(c.command({"SET", "last", "2"}).text == "OK");
  const int status = again.stop();
  CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
  KvServer third(dir, flags, tmp.file("kv3.out"));
  CHECK(third.output().find("replayed 0 mutations") != std::string::npos);
  Client c3(third.port());
  CHECK(c3.command({"GET", "last"}).text == "2");
  CHECK(c3.command({"DBSIZE"}).integer == 1201);
}

// Writers each SET their own keys one at a time and note every +OK; the
// server is killed mid-load and restarted; every noted SET must read back.
void kill_during_load(const std::string& policy_yaml, const std::string& name,
                      const std::vector<std::string>& flags = {}) {
  testing::TempDir tmp;
  const std::string dir = tmp.file("data");
  const std::string config = write_config(tmp, policy_yaml);
  constexpr int kWriters = 8;
  std::vector<int> acked(kWriters, 0);
  {
    std::vector<std::string> args = {"--config", config, "--memtable-size", "64kb"};
    args.insert(args.end(), flags.begin(), flags.end());
    KvServer server(dir, args, tmp.file("kv1.out"));
    std::vector<std::thread> writers;
    for (int w = 0; w < kWriters; ++w) {
      writers.emplace_back([&, w] {
        Client c(server.port());
        for (int i = 1;; ++i) {
          const Reply r =
              c.command({"SET", fmt::format("w{}:{}", w, i), fmt::format("value-{}-{}", w, i)});
          if (r.type != '+') return;
          acked[w] = i;
        }
      });
    }
    std::this_thread::sleep_for(400ms);
    server.kill9();
    for (auto& t : writers) t.join();
  }
  std::vector<std::string> args = {"--config", config};
  args.insert(args.end(), flags.begin(), flags.end());
  KvServer again(dir, args, tmp.file("kv2.out"));
  Client c(again.port());
  int total = 0, lost = 0;
  for (int w = 0; w < kWriters; ++w) {
    for (int i = 1; i <= acked[w]; ++i) {
      ++total;
      const Reply r = c.command({"GET", fmt::format("w{}:{}", w, i)});
      lost += r.text != fmt::format("value-{}-{}", w, i);
    }
  }
  MESSAGE(name << ": " << total << " acknowledged SETs before kill -9, " << lost << " lost\n"
               << again.output());
  CHECK(total > 0);
  CHECK(lost == 0);
}

TEST_CASE("kv: kill -9 during a write load loses no acknowledged SET") {
  SUBCASE("batch") { kill_during_load("commitlog_sync: batch\n", "batch"); }
  SUBCASE("group") {
    kill_during_load("commitlog_sync: group\ncommitlog_sync_group_window: 2ms\n",
                     "group (2 ms window)");
  }
  SUBCASE("adaptive") { kill_during_load("commitlog_sync: adaptive\n", "adaptive"); }
  // One worker by default; with two, a round of each waits for its own flush.
  SUBCASE("adaptive, two worker threads") {
    kill_during_load("commitlog_sync: adaptive\n", "adaptive (--threads 2)", {"--threads", "2"});
  }
  SUBCASE("group, two worker threads") {
    kill_during_load("commitlog_sync: group\ncommitlog_sync_group_window: 2ms\n",
                     "group (2 ms window, --threads 2)", {"--threads", "2"});
  }
  // The benchmark's reference: RocksDB's WAL synced once per round; with two
  // workers a reader may fence a write the other thread is still applying.
  SUBCASE("the reference setting, two worker threads") {
    kill_during_load("commitlog_sync: adaptive\n", "--reference-rocksdb-wal --threads 2",
                     {"--reference-rocksdb-wal", "--threads", "2"});
  }
}

TEST_CASE("kv: with cdc_enabled its changes wait in DIR/cdc_raw for a tail, discards or not") {
  testing::TempDir tmp;
  const std::string dir = tmp.file("data");
  const std::string config = write_config(tmp,
                                          "commitlog_sync: batch\n"
                                          "commitlog_segment_size: 1MiB\n"
                                          "cdc_enabled: true\n"
                                          "commitlog_ext_cdc_tables: [0]\n");
  const std::string value(8000, 'v');
  {
    KvServer server(dir, {"--config", config, "--memtable-size", "256kb"}, tmp.file("kv.out"));
    Client c(server.port());
    for (int i = 0; i < 400; ++i) REQUIRE(c.command({"SET", fmt::format("key{}", i), value}).text == "OK");
    REQUIRE(server.stop() == 0);
  }
  // The discards after RocksDB's flushes deleted segments from the log, not from cdc_raw.
  CHECK(testing::segment_files(dir + "/cdc_raw").size() > testing::segment_files(dir + "/commitlog").size());
  // SET key0 vvv...: op 4, one write, a put, then the key and the value, each after its length.
  const testing::CliResult tail =
      testing::run_cli(COMMITLOG_CLI, {"tail", dir + "/cdc_raw", "--format", "text", "--table", "0"});
  INFO(tail.err);
  REQUIRE(tail.exit_code == 0);
  size_t sets = 0;
  for (size_t at = tail.out.find("\\x04\\x01\\x00\\x04key"); at != std::string::npos;
       at = tail.out.find("\\x04\\x01\\x00\\x04key", at + 1)) {
    ++sets;
  }
  CHECK(sets == 10);  // key0 .. key9: the other keys are longer
  CHECK(tail.out.find("\\x04\\x01\\x00\\x06key399") != std::string::npos);
  CHECK(std::count(tail.out.begin(), tail.out.end(), '\n') >= 400);
}

}  // namespace
}  // namespace commitlog
