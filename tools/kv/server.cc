// SPDX-License-Identifier: Apache-2.0
#include "tools/kv/server.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <concepts>
#include <cstdio>
#include <functional>

#include <boost/fiber/all.hpp>
#include <fmt/core.h>

#include "commitlog/util/thread_name.h"
#include "tools/kv/durability.h"
#include "tools/kv/fiber_io.h"
#include "tools/kv/mutation.h"
#include "tools/kv/snapshot.h"

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

Server::Server(ServerOptions options) : options_(std::move(options)), auth_(options_.password) {
  log_dir_ = options_.dir + "/commitlog";
  policy_name_ = options_.log.sync_policy;
}

Server::~Server() = default;

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
  // Before anything is read: a second server on this --dir must neither
  // replay a log another one is writing nor remove its snapshots.
  auto lock = CommitLog::lock_directory(log_options);
  if (!lock.ok()) return lock.status();
  CL_RETURN_IF_ERROR(load());
  // Called on the log's own thread: only wakes the snapshotter.
  log_options.on_flush_request = [this](std::vector<uint32_t>) {
    {
      std::lock_guard lock(snapshot_mu_);
      snapshot_.due = snapshot_.requested = true;
      ++snapshot_.flush_requests;
    }
    snapshot_cv_.notify_all();
  };
  auto log = CommitLog::open(log_options, std::move(lock).value());
  if (!log.ok()) return log.status();
  log_ = std::move(log).value();
  store_.attach(log_.get());
  // A round is held open no longer than the policy may delay a write itself.
  max_hold_ = log_->policy_promise().max_added_delay;

  const uint64_t max_bulk = log_options.effective_max_mutation_size();
  resp::Limits limits;
  limits.max_request = max_bulk + (1u << 20);
  if (options_.query_buffer_limit > 0) {
    limits.max_request = std::min<uint64_t>(limits.max_request, options_.query_buffer_limit);
  }
  limits.max_bulk = std::min(max_bulk, limits.max_request);
  env_.reset(new ConnectionEnv{store_, limits, counters_,
                               [this](std::span<const std::string_view> s) { return info(s); },
                               auth_});
  CL_RETURN_IF_ERROR(listener_.open(options_.bind, options_.port));
  const MetricsSnapshot metrics = log_->metrics();
  const std::string access_mode =
      metrics.disk_access_mode_reason.empty()
          ? metrics.disk_access_mode
          : fmt::format("{} ({}: {})", metrics.disk_access_mode, metrics.disk_access_mode_setting,
                        metrics.disk_access_mode_reason);
  fmt::print(
      "commitlog-kv: listening on {}:{} (commitlog_sync {} ({}), commitlog_disk_access_mode {}, {} worker "
      "thread{}, snapshot every {} ms, commitlog_ext_spin_wait {} us, {})\n",
      options_.bind, listener_.port(), policy_name_, options_.policy_origin, access_mode, options_.threads,
      options_.threads == 1 ? "" : "s", options_.snapshot_interval.count(),
      std::chrono::duration_cast<std::chrono::microseconds>(log_->options().spin_wait).count(),
      auth_.required() ? "password required" : "no password");
  std::fflush(stdout);
  return {};
}

Status Server::load() {
  FileSystem& fs = *options_.log.file_system;
  CL_RETURN_IF_ERROR(fs.create_dirs(options_.dir, options_.log.directory_mode));
  auto started = std::chrono::steady_clock::now();
  std::vector<std::string> passed_over;
  auto snapshot = load_newest_snapshot(
      fs, options_.dir, [this](std::string_view k, std::string_view v) { store_.load(k, v); },
      &passed_over);
  if (!snapshot.ok()) return snapshot.status();
  for (const std::string& w : passed_over) fmt::print(stderr, "commitlog-kv: snapshot {}\n", w);
  if (!passed_over.empty() && options_.recovery != RecoveryMode::kSkip) {
    // An older snapshot may rest on log segments already discarded.
    return Status::corruption(
        "a snapshot does not verify; start with --recovery skip to use an older one");
  }
  std::optional<Position> from;
  if (*snapshot) {
    from = (*snapshot)->position;
    startup_.snapshot_path = (*snapshot)->path;
    startup_.snapshot_keys = (*snapshot)->entries;
    startup_.snapshot_ms = ms_since(started);
    fmt::print("commitlog-kv: loaded snapshot {} ({} keys, marker at {}) in {:.1f} ms\n",
               startup_.snapshot_path, startup_.snapshot_keys, from->to_string(),
               startup_.snapshot_ms);
  }

  started = std::chrono::steady_clock::now();
  if (fs.exists(log_dir_)) {
    ReplayOptions replay_options;
    replay_options.mode = options_.recovery;
    replay_options.from = from;
    replay_options.file_system = &fs;
    fmt::print("commitlog-kv: replaying {} ({})\n", log_dir_, recovery_mode_name(options_.recovery));
    std::fflush(stdout);
    uint64_t seen = 0;
    ReplayReport report =
        replay_directory(log_dir_, replay_options, [this, &seen](const ReplayedMutation& m) {
          if (++seen % kStopCheckInterval == 0 && stop_signal_pending()) {
            return Status::closed("replay interrupted by a signal; nothing was changed");
          }
          if (m.table != kDataTable) return Status{};
          // Snapshot markers (the loaded snapshot's own first) change nothing.
          const bool marker = !m.payload.empty() &&
                              m.payload[0] == std::byte{static_cast<uint8_t>(Op::kSnapshotMarker)};
          startup_.replayed += marker ? 0 : 1;
          return store_.apply_replayed(m.payload);
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
  {
    std::lock_guard lock(snapshot_mu_);
    snapshot_.due = startup_.replayed > 0;
    if (*snapshot) snapshot_.position = (*snapshot)->position;
  }
  // A crash while writing a snapshot leaves its .tmp; older snapshots may
  // remain from a crash between a rename and their removal.
  std::optional<Position> keep;
  if (*snapshot) keep = (*snapshot)->position;
  CL_RETURN_IF_ERROR(remove_old_snapshots(fs, options_.dir, keep));
  return {};
}

void Server::worker() {
  EpollScheduler& scheduler = EpollScheduler::install();
  ThreadDurability durability(*log_, scheduler, max_hold_);
  Worker worker{scheduler, durability};
  boost::fibers::fiber acceptor([this, &worker] { listener_.accept_loop(*clients_, *env_, worker); });
  acceptor.join();
  // Stopping: the acceptor is done, but connection fibers may still run on
  // this thread's scheduler and use `durability`. Neither may end before the
  // process does (run() ends it with _Exit), so this thread parks here.
  boost::fibers::promise<void> never;
  never.get_future().wait();
}

void Server::snapshot_loop() {
  std::unique_lock lock(snapshot_mu_);
  while (!stopping_) {
    const auto woken = [&] { return stopping_ || snapshot_.requested; };
    if (options_.snapshot_interval.count() > 0) {
      snapshot_cv_.wait_for(lock, options_.snapshot_interval, woken);
    } else {
      snapshot_cv_.wait(lock, woken);
    }
    if (stopping_) break;
    snapshot_.requested = false;
    lock.unlock();
    Status status = maybe_snapshot();
    if (!status.ok()) fmt::print(stderr, "commitlog-kv: snapshot: {}\n", status.to_string());
    lock.lock();
  }
}

Status Server::maybe_snapshot() {
  std::lock_guard run(snapshot_run_mu_);
  const uint64_t writes = store_.writes();
  uint64_t number = 0;
  {
    std::lock_guard lock(snapshot_mu_);
    if (writes == snapshot_.writes_covered && !snapshot_.due) return {};
    number = snapshot_.count + 1;
  }
  const auto started = std::chrono::steady_clock::now();
  // 1. A marker in the log and the table as of it.
  auto image = store_.capture(number);
  if (!image.ok()) return image.status();
  // 2. Everything before the marker durable, so the snapshot never holds a
  //    write the log could still lose.
  Status status = log_->sync();
  // 3. The snapshot: temp file, fsync, rename, fsync of the directory.
  FileSystem& fs = *options_.log.file_system;
  auto path = status.ok() ? write_snapshot(fs, options_.dir, *image, options_.log.file_mode) : Result<std::string>(status);
  // 4. Only now the log before the marker, and the older snapshots, go.
  Status discarded = path.ok() ? log_->discard(kDataTable, image->position) : path.status();
  if (path.ok()) status = remove_old_snapshots(fs, options_.dir, image->position);
  const double ms = ms_since(started);
  std::lock_guard lock(snapshot_mu_);
  if (!path.ok()) {
    snapshot_.last_error = path.status().to_string();
    return path.status();
  }
  snapshot_.count = number;
  snapshot_.position = image->position;
  snapshot_.keys = image->entries.size();
  snapshot_.ms = ms;
  snapshot_.writes_covered = writes;
  snapshot_.due = false;
  if (discarded.ok()) {
    ++snapshot_.discards;
    snapshot_.last_error.clear();
  } else {
    if (snapshot_.last_error != discarded.to_string()) {
      fmt::print(stderr, "commitlog-kv: discard: {}\n", discarded.to_string());
    }
    snapshot_.last_error = discarded.to_string();
  }
  fmt::print("commitlog-kv: snapshot {}: {} keys at {} in {:.1f} ms{}\n", number,
             image->entries.size(), image->position.to_string(), ms,
             discarded.ok() ? ", log discarded up to it" : "");
  std::fflush(stdout);
  return status;
}

int Server::run() {
  for (int i = 0; i < options_.threads; ++i) {
    workers_.emplace_back([this, i] {
      name_this_thread(fmt::format("kv-worker-{}", i));
      worker();
    });
  }
  snapshot_thread_ = std::thread([this] {
    name_this_thread("kv-snapshot");
    snapshot_loop();
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
    std::lock_guard lock(snapshot_mu_);
    stopping_ = true;
  }
  snapshot_cv_.notify_all();
  if (snapshot_thread_.joinable()) snapshot_thread_.join();
  listener_.stop();
  int code = 0;
  Status status = maybe_snapshot();
  if (!status.ok()) {
    fmt::print(stderr, "commitlog-kv: final snapshot: {}\n", status.to_string());
    code = 1;
  }
  Status closed = log_->close();
  if (!closed.ok()) {
    fmt::print(stderr, "commitlog-kv: close: {}\n", closed.to_string());
    code = 1;
  }
  fmt::print("commitlog-kv: stopped\n");
  std::fflush(stdout);
  std::fflush(stderr);
  // Connection fibers may still be parked on their sockets; nothing of
  // theirs needs unwinding once the log is closed.
  std::_Exit(code);
}

std::string Server::info(std::span<const std::string_view> sections) {
  auto wanted = [&](std::string_view name) {
    if (sections.empty()) return true;
    for (std::string_view s : sections) {
      if (s == name || s == "all" || s == "default" || s == "everything") return true;
    }
    return false;
  };
  std::string out;
  auto line = [&](std::string_view key, const auto& value) {
    out += fmt::format("{}:{}\r\n", key, value);
  };
  if (wanted("server")) {
    out += "# Server\r\n";
    line("redis_version", "7.0.0");
    line("commitlog_kv_version", "0.1.0");
    line("process_id", ::getpid());
    line("tcp_port", listener_.port());
    line("io_threads", options_.threads);
    line("uptime_in_seconds", static_cast<int64_t>(ms_since(started_at_) / 1000));
    out += "\r\n";
  }
  if (wanted("clients")) {
    out += "# Clients\r\n";
    line("connected_clients", counters_.connected.load());
    line("maxclients", options_.clients.max_clients);
    line("maxmemory_clients", options_.clients.max_memory);
    line("timeout", options_.clients.idle_timeout.count() / 1000.0);
    out += "\r\n";
  }
  if (wanted("stats")) {
    out += "# Stats\r\n";
    line("total_connections_received", counters_.connections_received.load());
    line("rejected_connections", clients_->rejected());
    line("evicted_clients", clients_->evicted());
    line("kv_idle_clients_closed", clients_->timed_out());
    line("total_commands_processed", counters_.commands.load());
    line("total_protocol_errors", counters_.protocol_errors.load());
    line("total_durability_failures", counters_.durability_failures.load());
    line("total_writes", store_.writes());
    out += "\r\n";
  }
  if (wanted("memory")) {
    out += "# Memory\r\n";
    line("kv_data_bytes", store_.bytes());
    line("mem_clients_normal", clients_->memory());
    out += "\r\n";
  }
  if (wanted("persistence")) {
    std::lock_guard lock(snapshot_mu_);
    out += "# Persistence\r\n";
    line("kv_snapshots", snapshot_.count);
    line("kv_snapshot_interval_ms", options_.snapshot_interval.count());
    line("kv_last_snapshot_position",
         snapshot_.position ? snapshot_.position->to_string() : "none");
    line("kv_last_snapshot_keys", snapshot_.keys);
    line("kv_last_snapshot_ms", fmt::format("{:.1f}", snapshot_.ms));
    line("kv_log_discards", snapshot_.discards);
    line("kv_log_flush_requests", snapshot_.flush_requests);
    line("kv_last_snapshot_error", snapshot_.last_error.empty() ? "none" : snapshot_.last_error);
    line("kv_startup_snapshot_keys", startup_.snapshot_keys);
    line("kv_startup_replayed_mutations", startup_.replayed);
    line("kv_startup_replay_ms", fmt::format("{:.1f}", startup_.replay_ms));
    line("kv_startup_torn_tail_bytes", startup_.torn_tail_bytes);
    out += "\r\n";
  }
  if (wanted("commitlog")) {
    const CommitLogStats s = log_->stats();
    auto files = list_segment_files(*options_.log.file_system, log_dir_);
    out += "# Commitlog\r\n";
    line("commitlog_sync", policy_name_);
    line("commitlog_directory", log_dir_);
    line("commitlog_segment_size", log_->options().segment_size);
    line("commitlog_max_mutation_size", log_->options().effective_max_mutation_size());
    line("commitlog_segment_files", files.ok() ? files->size() : 0);
    line("commitlog_flushes", s.flushes);
    line("commitlog_seals", s.seals);
    line("commitlog_flushed_mutations", s.flushed_mutations);
    line("commitlog_mutations_per_flush",
         fmt::format("{:.2f}", s.flushes ? static_cast<double>(s.flushed_mutations) /
                                               static_cast<double>(s.flushes)
                                         : 0.0));
    line("commitlog_avg_flush_us",
         fmt::format("{:.1f}", s.flushes ? static_cast<double>(s.flush_nanos) / 1e3 /
                                               static_cast<double>(s.flushes)
                                         : 0.0));
    line("commitlog_segment_switches", s.segment_switches);
    line("commitlog_allocation_waits", s.allocation_waits);
    line("commitlog_producers_waiting", s.producers_waiting);
    const MetricsSnapshot m = log_->metrics();
    line("commitlog_seal_waits", m.seal_waits);
    line("commitlog_seal_wait_ms",
         fmt::format("{:.1f}", static_cast<double>(m.seal_wait_nanos) / 1e6));
    line("commitlog_spin_wait_us",
         std::chrono::duration_cast<std::chrono::microseconds>(log_->options().spin_wait).count());
    line("commitlog_spins", m.spins);
    line("commitlog_spins_missed", m.spins_missed);
    line("commitlog_spin_ms", fmt::format("{:.1f}", static_cast<double>(m.spin_nanos) / 1e6));
    line("commitlog_durable_position", s.durable.to_string());
    out += "\r\n";
  }
  if (wanted("keyspace")) {
    DurableFence unused;  // an approximate count needs no durability
    out += "# Keyspace\r\n";
    line("db0", fmt::format("keys={},expires=0,avg_ttl=0", store_.size(unused)));
    out += "\r\n";
  }
  return out;
}

}  // namespace commitlog::kv
