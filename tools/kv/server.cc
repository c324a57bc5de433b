// SPDX-License-Identifier: Apache-2.0
#include "tools/kv/server.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include <boost/fiber/all.hpp>
#include <fmt/core.h>

#include "commitlog/policy_registry.h"
#include "commitlog/util/thread_name.h"
#include "tools/kv/durability.h"
#include "tools/kv/fiber_io.h"
#include "tools/kv/mutation.h"

namespace commitlog::kv {

namespace {

// Replayed mutations between two looks for a SIGINT or SIGTERM.
constexpr uint64_t kStopCheckInterval = 256;

// main() blocks SIGINT and SIGTERM in every thread and only run() waits for
// them, so while the log replays they stay pending: the replay looks.
bool stop_signal_pending() {
  sigset_t pending;
  return ::sigpending(&pending) == 0 &&
         (sigismember(&pending, SIGINT) == 1 || sigismember(&pending, SIGTERM) == 1);
}

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

}  // namespace

Server::Server(ServerOptions options)
    : options_(std::move(options)),
      store_([clock = options_.log.clock] { return static_cast<int64_t>(clock->wall_micros() / 1000); }),
      auth_(options_.password) {
  log_dir_ = options_.dir + "/commitlog";
  engine_dir_ = options_.dir + "/rocksdb";
  policy_name_ = options_.reference_rocksdb_wal ? "rocksdb-wal-sync" : options_.log.sync_policy;
  hooks_.info = [this](std::span<const std::string_view> s) { return info(s); };
  hooks_.config = [this] { return config(); };
  hooks_.shutdown = [] { ::kill(::getpid(), SIGTERM); };
}

Server::~Server() = default;

namespace {

// The largest request a client may send by default: a mutation's largest
// value, with room for the command and its key.
uint64_t largest_request(const Options& log_options) { return log_options.effective_max_mutation_size() + (1u << 20); }

}  // namespace

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

  Options log_options = options_.log;
  log_options.directory = log_dir_;
  // Called on the log's own thread: only wakes the flusher.
  log_options.on_flush_request = [this](std::vector<uint32_t>) {
    {
      std::lock_guard lock(flush_mu_);
      flush_requested_ = true;
      ++flush_requests_;
    }
    flush_cv_.notify_all();
  };
  if (Status s = check_input(log_options); !s.ok()) {
    bad_input_ = true;
    return s;
  }
  std::unique_ptr<FileLock> lock;
  if (!options_.reference_rocksdb_wal) {
    // Before anything is read: a second server on this --dir must not replay
    // a log another one is writing.
    auto locked = CommitLog::lock_directory(log_options);
    if (!locked.ok()) return locked.status();
    lock = std::move(locked).value();
  }
  CL_RETURN_IF_ERROR(open_engine());
  if (!options_.reference_rocksdb_wal) {
    CL_RETURN_IF_ERROR(replay());
    // What was replayed goes to an SST file now, as Cassandra flushes after
    // its replay: then every segment of the earlier runs is covered.
    if (startup_.replayed > 0) CL_RETURN_IF_ERROR(engine_->flush());
    auto log = CommitLog::open(log_options, std::move(lock));
    if (!log.ok()) return log.status();
    log_ = std::move(log).value();
    open_log_.store(log_.get());
    // The segments of the earlier runs go (a position below this run's first
    // segment covers them); an idle run so leaves only its own behind.
    std::optional<Position> covered;
    {
      std::lock_guard guard(flush_mu_);
      covered = flushed_ ? flushed_ : startup_.checkpoint;
    }
    flushed(covered.value_or(Position{}));
    // A round is held open no longer than the policy may delay a write itself.
    max_hold_ = log_->policy_promise().max_added_delay;
  } else {
    // The reference holds its rounds by the same rule and bound.
    auto policy = PolicyRegistry::global().create(options_.log.sync_policy, options_.log.policy);
    if (!policy.ok()) return policy.status();
    max_hold_ = (*policy)->promise().max_added_delay;
  }
  store_.attach(engine_.get(), log_.get());

  const uint64_t max_bulk = log_options.effective_max_mutation_size();
  resp::Limits limits;
  limits.max_request = options_.query_buffer_limit > 0 ? options_.query_buffer_limit : largest_request(log_options);
  limits.max_bulk = std::min(max_bulk, limits.max_request);
  env_.reset(new ConnectionEnv{store_, limits, counters_, hooks_, auth_});
  const std::string password = auth_.required() ? "password required" : "no password";
  const std::string threads = fmt::format("{} worker thread{}", options_.threads, options_.threads == 1 ? "" : "s");
  if (log_) {
    const MetricsSnapshot metrics = log_->metrics();
    const std::string access_mode =
        metrics.disk_access_mode_reason.empty()
            ? metrics.disk_access_mode
            : fmt::format("{} ({}: {})", metrics.disk_access_mode, metrics.disk_access_mode_setting,
                          metrics.disk_access_mode_reason);
    fmt::print(
        "commitlog-kv: listening on {}:{} (commitlog_sync {} ({}), commitlog_disk_access_mode {}, {}, "
        "commitlog_ext_spin_wait {} us, engine rocksdb in {} with its WAL off, the commit log in {}, {})\n",
        options_.bind, listener_.port(), policy_name_, options_.policy_origin, access_mode, threads,
        std::chrono::duration_cast<std::chrono::microseconds>(log_->options().spin_wait).count(),
        engine_dir_, log_dir_, password);
  } else {
    fmt::print(
        "commitlog-kv: listening on {}:{} (reference setting: no commit log, engine rocksdb in {} with "
        "its own WAL, synced once per round, {}, {})\n",
        options_.bind, listener_.port(), engine_dir_, threads, password);
  }
  std::fflush(stdout);
  return {};
}

Status Server::open_engine() {
  EngineOptions o;
  o.path = engine_dir_;
  // Under a log limit RocksDB flushes by itself at a quarter of it, so that
  // discards keep pace and the log's requests are the exception.
  o.memtable_bytes = options_.memtable_bytes;
  if (options_.log.total_space > 0)
    o.memtable_bytes = std::min<uint64_t>(o.memtable_bytes, std::max<uint64_t>(options_.log.total_space / 4, 64u << 10));
  o.own_wal = options_.reference_rocksdb_wal;
  o.now_ms = [this] { return store_.now_ms(); };
  if (!o.own_wal) o.on_flushed = [this](Position p) { flushed(p); };
  auto engine = Engine::open(std::move(o));
  if (!engine.ok()) return engine.status();
  engine_ = std::move(engine).value();
  store_.attach(engine_.get(), nullptr);
  return {};
}

Status Server::replay() {
  auto checkpoint = engine_->checkpoint();
  if (!checkpoint.ok()) return checkpoint.status();
  startup_.checkpoint = *checkpoint;
  FileSystem& fs = *options_.log.file_system;
  const auto started = std::chrono::steady_clock::now();
  if (fs.exists(log_dir_)) {
    ReplayOptions replay_options;
    replay_options.mode = options_.recovery;
    replay_options.keys = options_.log.encryption;
    replay_options.from = *checkpoint;
    replay_options.file_system = &fs;
    fmt::print("commitlog-kv: replaying {} after RocksDB's checkpoint {} ({})\n", log_dir_,
               *checkpoint ? (*checkpoint)->to_string() : "none", recovery_mode_name(options_.recovery));
    std::fflush(stdout);
    uint64_t seen = 0;
    const std::optional<Position> from = *checkpoint;
    ReplayReport report = replay_directory(log_dir_, replay_options, [&](const ReplayedMutation& m) {
      if (++seen % kStopCheckInterval == 0 && stop_signal_pending()) {
        return Status::closed("replay interrupted by a signal; nothing was changed");
      }
      if (m.table != kDataTable) return Status{};
      if (from && m.position <= *from) {  // RocksDB has it already
        ++startup_.skipped;
        return Status{};
      }
      ++startup_.replayed;
      return store_.apply_replayed(m.payload, m.position);
    });
    for (const ReplayProblem& p : report.problems) {
      if (p.corruption) {
        fmt::print(stderr, "commitlog-kv: replay: {} at {}:{} ({} bytes)\n", p.kind, p.file,
                   p.offset, p.bytes);
      }
    }
    if (!report.status.ok()) return report.status;
    startup_.replay_segments = report.segments;
    startup_.torn_tail_bytes = report.torn_tail_bytes;
    startup_.corruptions = report.corruptions;
  }
  startup_.replay_ms = ms_since(started);
  fmt::print(
      "commitlog-kv: replayed {} mutations from {} segments in {:.1f} ms (torn tail {} bytes, {} "
      "corruptions)\n",
      startup_.replayed, startup_.replay_segments, startup_.replay_ms, startup_.torn_tail_bytes,
      startup_.corruptions);
  return {};
}

void Server::flushed(Position checkpoint) {
  {
    std::lock_guard lock(flush_mu_);
    if (!flushed_ || *flushed_ < checkpoint) flushed_ = checkpoint;
  }
  CommitLog* log = open_log_.load();
  if (log == nullptr) return;  // still replaying: start() discards once the log is open
  Status s = log->discard(kDataTable, checkpoint);
  std::lock_guard lock(flush_mu_);
  if (s.ok()) {
    ++discards_;
    if (!discarded_ || *discarded_ < checkpoint) discarded_ = checkpoint;
    flush_cv_.notify_all();
  } else if (last_error_ != s.to_string()) {
    last_error_ = s.to_string();
    fmt::print(stderr, "commitlog-kv: discard: {}\n", last_error_);
  }
}

void Server::worker() {
  EpollScheduler& scheduler = EpollScheduler::install();
  // A round ends in a wait for the log's flush or, in the reference
  // setting, in a sync of RocksDB's own WAL; the rest of it is the same.
  WaitDurable wait_durable = [log = log_.get()](Position p) { return log->wait_durable(p); };
  if (!log_) wait_durable = [engine = engine_.get()](Position p) { return engine->sync_wal(p); };
  ThreadDurability durability(std::move(wait_durable), scheduler, max_hold_);
  Worker worker{scheduler, &durability};
  boost::fibers::fiber acceptor([this, &worker] { listener_.accept_loop(*clients_, *env_, worker); });
  acceptor.join();
  // Stopping: the acceptor is done, but connection fibers may still run on
  // this thread's scheduler and use `durability`. Neither may end before the
  // process does (run() ends it with _Exit), so this thread parks here.
  boost::fibers::promise<void> never;
  never.get_future().wait();
}

void Server::flush_loop() {
  std::unique_lock lock(flush_mu_);
  while (true) {
    flush_cv_.wait(lock, [&] { return stopping_ || flush_requested_; });
    if (stopping_) return;
    flush_requested_ = false;
    lock.unlock();
    // The listener discards once the flush is done (flushed()).
    Status s = engine_->flush();
    lock.lock();
    if (!s.ok()) {
      last_error_ = s.to_string();
      fmt::print(stderr, "commitlog-kv: flush: {}\n", last_error_);
    }
  }
}

int Server::run() {
  for (int i = 0; i < options_.threads; ++i) {
    workers_.emplace_back([this, i] {
      name_this_thread(fmt::format("kv-worker-{}", i));
      worker();
    });
  }
  flush_thread_ = std::thread([this] {
    name_this_thread("kv-flusher");
    flush_loop();
  });

  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  int signal = 0;
  while (sigwait(&signals, &signal) != 0) {
  }
  fmt::print("commitlog-kv: {} received, stopping\n", signal == SIGINT ? "SIGINT" : "SIGTERM");
  {
    std::lock_guard lock(flush_mu_);
    stopping_ = true;
  }
  flush_cv_.notify_all();
  if (flush_thread_.joinable()) flush_thread_.join();
  listener_.stop();
  int code = 0;
  // Everything in RocksDB's SST files; the listener discards the log. Writes
  // that still arrive stay in the log for the next start.
  auto checkpoint = engine_->checkpoint();
  if (Status s = engine_->flush(); !s.ok()) {
    fmt::print(stderr, "commitlog-kv: final flush: {}\n", s.to_string());
    code = 1;
  }
  if (log_) {
    // The listener discards on RocksDB's thread, maybe after Flush() returned.
    if (checkpoint.ok() && *checkpoint && code == 0) {
      std::unique_lock lock(flush_mu_);
      flush_cv_.wait_for(lock, std::chrono::seconds(10),
                         [&] { return discarded_ && *discarded_ >= **checkpoint; });
    }
    if (Status closed = log_->close(); !closed.ok()) {
      fmt::print(stderr, "commitlog-kv: close: {}\n", closed.to_string());
      code = 1;
    }
  }
  fmt::print("commitlog-kv: stopped\n");
  std::fflush(stdout);
  std::fflush(stderr);
  // Connection fibers may still be parked on their sockets; nothing of
  // theirs needs unwinding once the data is flushed and the log closed.
  std::_Exit(code);
}

}  // namespace commitlog::kv
