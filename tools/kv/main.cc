// SPDX-License-Identifier: Apache-2.0
// commitlog-kv: a Redis-protocol (RESP2) key-value server on RocksDB with
// the commit log as its WAL. docs/kv.md describes it; tools/kv/server.h its
// threads.
//
//   commitlog-kv [--config FILE] [--dir DIR] [--port PORT] [--bind ADDR]
//                [--policy NAME] [--memtable-size SIZE] [--recovery MODE]
//                [--reference-rocksdb-wal]
//                [--requirepass PASSWORD | --requirepass-file FILE]
//                [--protected-mode yes|no] [--maxclients N] [--maxmemory-clients SIZE]
//                [--timeout SECONDS] [--client-query-buffer-limit SIZE]
#include <malloc.h>
#include <signal.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include "commitlog/config.h"
#include "tools/common/recovery_mode_option.h"
#include "tools/kv/server.h"

namespace {

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

// A server answers a write once it is durable unless its config or --policy
// says otherwise; the library's own default, periodic, answers first.
constexpr const char* kDefaultPolicy = "adaptive";

struct ServerArgs {
  std::string config;
  std::string policy;
  commitlog::RecoveryMode recovery = commitlog::RecoveryMode::kTolerateTornTail;
  std::string password_file;
  std::string key_file;
  double timeout_s = 0;
};

// A CLI11 validator and setter for Redis's memory sizes (client_limits.h).
void add_memory_option(CLI::App& app, const std::string& name, uint64_t* bytes,
                       const std::string& description, const std::string& shown_default) {
  app.add_option_function<std::string>(
         name, [bytes](const std::string& text) { *bytes = commitlog::kv::parse_memory_size(text).value(); },
         description)
      ->check([](const std::string& text) {
        auto parsed = commitlog::kv::parse_memory_size(text);
        return parsed.ok() ? std::string() : parsed.status().message();
      })
      ->default_str(shown_default);
}

int run(const ServerArgs& args, commitlog::kv::ServerOptions options) {
  using namespace commitlog;
  options.log.sync_policy = kDefaultPolicy;
  options.policy_origin = "commitlog-kv's default";
  if (!args.config.empty()) {
    auto loaded = load_config_file(args.config);
    if (!loaded.ok()) {
      fmt::print(stderr, "commitlog-kv: {}\n", loaded.status().to_string());
      return kExitUsage;
    }
    for (const std::string& w : loaded->warnings)
      fmt::print(stderr, "commitlog-kv: warning: {}\n", w);
    options.log = loaded->options;
    for (const ConfigValue& v : loaded->settings) {
      if (v.key == "commitlog_sync") {
        if (v.source == ConfigSource::kFile) {
          options.policy_origin = fmt::format("{}:{}", args.config, v.line);
        } else {
          options.log.sync_policy = kDefaultPolicy;
        }
      }
      if (v.key == "commitlog_directory" && v.source == ConfigSource::kFile) {
        fmt::print(
            stderr,
            "commitlog-kv: note: {}:{}: commitlog_directory is replaced by --dir {}/commitlog\n",
            args.config, v.line, options.dir);
      }
    }
  }
  if (!args.policy.empty()) {
    options.log.sync_policy = args.policy;
    options.policy_origin = "--policy";
  }
  options.recovery = args.recovery;
  if (!args.key_file.empty()) {
    // Overrides the config's transparent_data_encryption_options.
    auto keys = commitlog::load_key_file(args.key_file);
    if (!keys.ok()) {
      fmt::print(stderr, "commitlog-kv: --key-file: {}\n", keys.status().message());
      return kExitUsage;
    }
    options.log.encryption = std::move(keys).value();
  }
  options.clients.idle_timeout =
      std::chrono::milliseconds(static_cast<int64_t>(args.timeout_s * 1000));
  if (!args.password_file.empty()) {
    auto password = kv::read_password_file(args.password_file);
    if (!password.ok()) {
      fmt::print(stderr, "commitlog-kv: {}\n", password.status().to_string());
      return kExitUsage;
    }
    options.password = std::move(password).value();
  }
  if (Status exposed = kv::check_protected_mode(options.bind, !options.password.empty(),
                                                options.protected_mode);
      !exposed.ok()) {
    fmt::print(stderr, "commitlog-kv: {}\n", exposed.message());
    return kExitUsage;
  }

  kv::Server server(std::move(options));
  Status started = server.start();
  if (started.code() == ErrorCode::kBusy || server.bad_input()) {
    // Bad options, directory or port, or another server (or log) owns the
    // directory: a usage error, named, before anything was replayed.
    fmt::print(stderr, "commitlog-kv: {}\n", started.message());
    return kExitUsage;
  }
  if (!started.ok()) {
    fmt::print(stderr, "commitlog-kv: {}\n", started.to_string());
    return kExitFailure;
  }
  return server.run();
}

}  // namespace

int main(int argc, char** argv) {
  // Before any thread exists, so that every thread inherits the mask and
  // only the main thread's sigwait() sees SIGINT and SIGTERM.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);
  // The data (RocksDB's files, the log's segments) is the owner's alone,
  // whatever the umask it was started with.
  ::umask(077);
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  // Query buffers past this come from mmap and go back to the system when
  // freed, so a client disconnected for its memory returns it at once (a
  // fixed threshold: glibc's own rises after each large free).
  mallopt(M_MMAP_THRESHOLD, 256 << 10);

  CLI::App app{"commitlog-kv: a Redis-protocol key-value server on RocksDB with the commit log as its WAL"};
  ServerArgs args;
  commitlog::kv::ServerOptions options;
  app.set_version_flag("-V,--version", "commitlog-kv " COMMITLOG_VERSION);
  app.add_option("--config", args.config,
                 "commit-log yaml (conf/commitlog.yaml keys); without commitlog_sync in it, "
                 "the policy is adaptive");
  app.add_option("--dir", options.dir, "data directory: RocksDB in DIR/rocksdb, the log in DIR/commitlog")
      ->capture_default_str();
  app.add_option("--port", options.port, "TCP port; 0 picks a free one")
      ->capture_default_str()
      ->check(CLI::Range(0, 65535));
  app.add_option("--bind", options.bind, "address to listen on")->capture_default_str();
  app.add_option("--policy", args.policy, "sync policy, overriding the config's commitlog_sync");
  add_memory_option(app, "--memtable-size", &options.memtable_bytes,
                    "RocksDB's write_buffer_size (at most a quarter of commitlog_total_space): a "
                    "full memtable is flushed to an SST file and the log discarded up to it",
                    "64mb");
  app.add_flag("--reference-rocksdb-wal", options.reference_rocksdb_wal,
               "the reference setting for comparisons: no commit log, RocksDB's own WAL, "
               "synced once per round of a worker (DB::SyncWAL) before its replies, as the log "
               "is flushed");
  app.add_option_function<std::string>(
         "--recovery",
         [&args](const std::string& name) { args.recovery = *commitlog::parse_recovery_mode(name); },
         "on a damaged log: tolerate-torn-tail (stop at corruption), absolute (stop at any damage), "
         "point-in-time (start from what precedes the first corruption) or skip (pass over damage)")
      ->check(commitlog::tools::check_recovery_mode)
      ->default_str(commitlog::recovery_mode_name(args.recovery));
  app.add_option("--key-file", args.key_file,
                 "encrypt the log with the master keys in FILE (lines '<id> <64 hex digits>', mode 0600; "
                 "docs/encryption.md)")
      ->type_name("FILE");
  app.add_option("--threads", options.threads, "worker threads serving connections")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  auto* pass = app.add_option("--requirepass", options.password,
                              "password clients must give with AUTH (visible in ps: prefer "
                              "--requirepass-file)");
  app.add_option("--requirepass-file", args.password_file,
                 "file whose first line is the password clients must give with AUTH")
      ->excludes(pass);
  app.add_option_function<std::string>(
         "--protected-mode",
         [&options](const std::string& v) { options.protected_mode = v == "yes"; },
         "yes: refuse to listen beyond the loopback without a password; no: allow it")
      ->check(CLI::IsMember({"yes", "no"}))
      ->default_str("yes");
  app.add_option("--maxclients", options.clients.max_clients,
                 "most clients connected at once; past it a new one gets -ERR max number of "
                 "clients reached")
      ->capture_default_str()
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 20));
  add_memory_option(app, "--maxmemory-clients", &options.clients.max_memory,
                    "bound on the query and reply buffers of all clients together; past it the "
                    "largest clients are disconnected; 0: none",
                    "256mb");
  app.add_option("--timeout", args.timeout_s,
                 "seconds a client may stay idle before it is disconnected; 0: never")
      ->capture_default_str()
      ->check([](const std::string& text) {
        // Range alone lets NaN through; below a millisecond would mean "never".
        const double s = std::strtod(text.c_str(), nullptr);
        return s == 0 || (s >= 0.001 && s <= 1e9) ? std::string() : "from 0.001 to 1e9 seconds, or 0";
      });
  add_memory_option(app, "--client-query-buffer-limit", &options.query_buffer_limit,
                    "largest request a client may send (at most max_mutation_size + 1mb, the "
                    "default)",
                    "max_mutation_size + 1mb");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? kExitOk : kExitUsage;
  }
  options.memtable_bytes_given = app.count("--memtable-size") > 0;
  if (commitlog::Status empty =
          pass->count() > 0 ? commitlog::kv::check_requirepass(options.password) : commitlog::Status();
      !empty.ok()) {
    fmt::print(stderr, "commitlog-kv: {}\n", empty.message());
    return kExitUsage;
  }
  try {
    return run(args, std::move(options));
  } catch (const std::exception& e) {
    fmt::print(stderr, "commitlog-kv: {}\n", e.what());
    return kExitFailure;
  }
}
