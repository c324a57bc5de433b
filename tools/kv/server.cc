// SPDX-License-Identifier: Apache-2.0
#include "tools/kv/server.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include <boost/fiber/all.hpp>
#include <fmt/core.h>

#include "commitlog/lifecycle/access_mode.h"
#include "commitlog/util/thread_name.h"
#include "tools/kv/durability.h"
#include "tools/kv/fiber_io.h"

namespace commitlog::kv {

Server::Server(ServerOptions options)
    : options_(std::move(options)), data_(options_), auth_(options_.password) {
  hooks_.info = [this](std::span<const std::string_view> s) { return info(s); };
  hooks_.config = [this] { return config(); };
  hooks_.shutdown = [this](const std::string& client) {
    {
      std::lock_guard lock(shutdown_mu_);
      if (!shutdown_by_) shutdown_by_ = client;
    }
    ::kill(::getpid(), SIGTERM);
  };
}

Server::~Server() = default;

namespace {

// The largest request a client may send by default: a mutation's largest
// value, with room for the command and its key.
uint64_t largest_request(const Options& log_options) { return log_options.effective_max_mutation_size() + (1u << 20); }

// "64mb", "96kb", "1000": a size as the memory options take it.
std::string memory_text(uint64_t bytes) {
  for (const auto& [unit, size] :
       {std::pair{"gb", 1ull << 30}, std::pair{"mb", 1ull << 20}, std::pair{"kb", 1ull << 10}}) {
    if (bytes >= size && bytes % size == 0) return fmt::format("{}{}", bytes / size, unit);
  }
  return std::to_string(bytes);
}

}  // namespace

std::string Server::policy_name() const {
  return options_.reference_rocksdb_wal ? "rocksdb-wal-sync" : options_.log.sync_policy;
}

Status Server::check_input(const Options& log_options) {
  if (!options_.reference_rocksdb_wal) {
    if (Status s = check_options(log_options); !s.ok()) return Status::invalid_argument(s.message());
  }
  if (options_.memtable_bytes < (64u << 10))
    return Status::invalid_argument("--memtable-size: at least 64kb");
  // Redis's floor; the ceiling is the largest request a mutation can carry.
  const uint64_t max_request = largest_request(log_options);
  if (options_.query_buffer_limit > 0 &&
      (options_.query_buffer_limit < (1u << 20) || options_.query_buffer_limit > max_request)) {
    return Status::invalid_argument(fmt::format(
        "--client-query-buffer-limit: {} bytes, not from 1mb to max_mutation_size + 1mb ({} bytes)",
        options_.query_buffer_limit, max_request));
  }
  FileSystem& fs = *options_.log.file_system;
  if (Status s = fs.create_dirs(options_.dir, options_.log.directory_mode); !s.ok())
    return Status::invalid_argument("--dir " + options_.dir + ": " + s.message());
  if (::access(options_.dir.c_str(), R_OK | W_OK | X_OK) != 0)
    return Status::invalid_argument("--dir " + options_.dir + ": not writable");
  if (!options_.reference_rocksdb_wal) {
    if (auto mode = choose_access_mode_before_open(log_options); !mode.ok())
      return Status::invalid_argument(mode.status().message());
  }
  if (Status s = listener_.open(options_.bind, options_.port); !s.ok())
    return Status::invalid_argument(fmt::format("--bind {} --port {}: {}", options_.bind, options_.port, s.message()));
  return {};
}

Status Server::start() {
  started_at_ = std::chrono::steady_clock::now();
  const uint64_t max_clients = fit_open_files(options_.clients.max_clients);
  if (max_clients < options_.clients.max_clients) {
    fmt::print(stderr,
               "commitlog-kv: warning: maxclients {} needs {} open files, more than this process "
               "may open (ulimit -n); maxclients is {}\n",
               options_.clients.max_clients, options_.clients.max_clients + kReservedFiles,
               max_clients);
    options_.clients.max_clients = max_clients;
  }
  clients_ = std::make_unique<ClientRegistry>(options_.clients);

  const Options log_options = data_.log_options();
  if (Status s = check_input(log_options); !s.ok()) {
    bad_input_ = true;
    return s;
  }
  const uint64_t memtable_bytes = memtable_bytes_used(options_);
  if (options_.memtable_bytes_given && memtable_bytes < options_.memtable_bytes) {
    fmt::print(stderr,
               "commitlog-kv: warning: --memtable-size {} is over a quarter of "
               "commitlog_total_space ({}): using {}, so that RocksDB flushes before the log is "
               "over its space\n",
               memory_text(options_.memtable_bytes), memory_text(options_.log.total_space),
               memory_text(memtable_bytes));
  }
  CL_RETURN_IF_ERROR(data_.open(log_options));

  const uint64_t max_bulk = log_options.effective_max_mutation_size();
  resp::Limits limits;
  limits.max_request = options_.query_buffer_limit > 0 ? options_.query_buffer_limit : largest_request(log_options);
  limits.max_bulk = std::min(max_bulk, limits.max_request);
  env_.reset(new ConnectionEnv{data_.store(), limits, counters_, hooks_, auth_});
  const std::string password = auth_.required() ? "password required" : "no password";
  const std::string threads = fmt::format("{} worker thread{}", options_.threads, options_.threads == 1 ? "" : "s");
  if (const CommitLog* log = data_.log()) {
    const MetricsSnapshot metrics = log->metrics();
    const std::string access_mode =
        metrics.disk_access_mode_reason.empty()
            ? metrics.disk_access_mode
            : fmt::format("{} ({}: {})", metrics.disk_access_mode, metrics.disk_access_mode_setting,
                          metrics.disk_access_mode_reason);
    fmt::print(
        "commitlog-kv: listening on {}:{} (commitlog_sync {} ({}), commitlog_disk_access_mode {}, {}, "
        "commitlog_ext_spin_wait {} us, engine rocksdb in {} with its WAL off, the commit log in {}, {})\n",
        options_.bind, listener_.port(), policy_name(), options_.policy_origin, access_mode, threads,
        std::chrono::duration_cast<std::chrono::microseconds>(log->options().spin_wait).count(),
        data_.engine_dir(), data_.log_dir(), password);
  } else {
    fmt::print(
        "commitlog-kv: listening on {}:{} (reference setting: no commit log, engine rocksdb in {} with "
        "its own WAL, synced once per round, {}, {})\n",
        options_.bind, listener_.port(), data_.engine_dir(), threads, password);
  }
  std::fflush(stdout);
  return {};
}

void Server::worker() {
  EpollScheduler& scheduler = EpollScheduler::install();
  ThreadDurability durability(data_.wait_durable(), scheduler, data_.max_hold());
  Worker worker{scheduler, &durability};
  boost::fibers::fiber acceptor([this, &worker] { listener_.accept_loop(*clients_, *env_, worker); });
  acceptor.join();
  // Stopping: the acceptor is done, but connection fibers may still run on
  // this thread's scheduler and use `durability`. Neither may end before the
  // process does (run() ends it with _Exit), so this thread parks here.
  boost::fibers::promise<void> never;
  never.get_future().wait();
}

int Server::run() {
  for (int i = 0; i < options_.threads; ++i) {
    workers_.emplace_back([this, i] {
      name_this_thread(fmt::format("kv-worker-{}", i));
      worker();
    });
  }
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  int signal = 0;
  while (sigwait(&signals, &signal) != 0) {
  }
  std::string why = signal == SIGINT ? "SIGINT received" : "SIGTERM received";
  {
    std::lock_guard lock(shutdown_mu_);
    if (signal == SIGTERM && shutdown_by_) why = "SHUTDOWN from client " + *shutdown_by_;
  }
  fmt::print("commitlog-kv: {}, stopping\n", why);
  listener_.stop();
  const int code = data_.close() ? 0 : 1;
  fmt::print("commitlog-kv: stopped\n");
  std::fflush(stdout);
  std::fflush(stderr);
  // Connection fibers may still be parked on their sockets; nothing of
  // theirs needs unwinding once the data is flushed and the log closed.
  std::_Exit(code);
}

}  // namespace commitlog::kv
