// SPDX-License-Identifier: Apache-2.0
#include "tools/kv/store_lifecycle.h"

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include <fmt/core.h>

#include "commitlog/policy_registry.h"
#include "tools/kv/mutation.h"

namespace commitlog::kv {
namespace {

// Replayed mutations between two looks for a SIGINT or SIGTERM.
constexpr uint64_t kStopCheckInterval = 256;

// main() blocks SIGINT and SIGTERM in every thread and only Server::run()
// waits for them, so while the log replays they stay pending: the replay
// looks.
bool stop_signal_pending() {
  sigset_t pending;
  return ::sigpending(&pending) == 0 &&
         (sigismember(&pending, SIGINT) == 1 || sigismember(&pending, SIGTERM) == 1);
}

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

// A full memtable flushes, and its discard frees the log behind it: at a
// quarter of the log's space, discards keep the log under it. A larger one
// still works, through the log's flush requests once it is over its space
// (flushes RocksDB did not choose), so the value is lowered, not refused.
uint64_t memtable_bytes_used(const ServerOptions& options) {
  if (options.log.total_space == 0) return options.memtable_bytes;
  return std::min<uint64_t>(options.memtable_bytes,
                            std::max<uint64_t>(options.log.total_space / 4, 64u << 10));
}

StoreLifecycle::StoreLifecycle(const ServerOptions& options)
    : options_(options),
      log_dir_(options.dir + "/commitlog"),
      engine_dir_(options.dir + "/rocksdb"),
      store_([clock = options.log.clock] { return static_cast<int64_t>(clock->wall_micros() / 1000); }) {}

StoreLifecycle::~StoreLifecycle() { discarder_.stop(); }

Options StoreLifecycle::log_options() {
  Options o = options_.log;
  o.directory = log_dir_;
  o.on_flush_request = [this](std::vector<uint32_t>) { discarder_.request_flush(); };
  return o;
}

Status StoreLifecycle::open(const Options& log_options) {
  std::unique_ptr<FileLock> lock;
  if (!options_.reference_rocksdb_wal) {
    // Before anything is read: a second server on this --dir must not replay
    // a log another one is writing.
    auto locked = CommitLog::lock_directory(log_options);
    if (!locked.ok()) return locked.status();
    lock = std::move(locked).value();
  }
  CL_RETURN_IF_ERROR(open_engine());
  if (options_.reference_rocksdb_wal) {
    // The reference holds its rounds by the same rule and bound.
    auto policy = PolicyRegistry::global().create(options_.log.sync_policy, options_.log.policy);
    if (!policy.ok()) return policy.status();
    max_hold_ = (*policy)->promise().max_added_delay;
  } else {
    CL_RETURN_IF_ERROR(replay());
    // What was replayed goes to an SST file now, as Cassandra flushes after
    // its replay: then every segment of the earlier runs is covered.
    if (startup_.replayed > 0) CL_RETURN_IF_ERROR(engine_->flush());
    auto log = CommitLog::open(log_options, std::move(lock));
    if (!log.ok()) return log.status();
    log_ = std::move(log).value();
    discarder_.attach(log_.get(), startup_.checkpoint);
    // A round is held open no longer than the policy may delay a write itself.
    max_hold_ = log_->policy_promise().max_added_delay;
  }
  store_.attach(engine_.get(), log_.get());
  discarder_.start(*engine_);
  return {};
}

Status StoreLifecycle::open_engine() {
  EngineOptions o;
  o.path = engine_dir_;
  o.memtable_bytes = memtable_bytes_used(options_);
  o.own_wal = options_.reference_rocksdb_wal;
  o.now_ms = [this] { return store_.now_ms(); };
  if (!o.own_wal) o.on_flushed = [this](Position p) { discarder_.flushed(p); };
  auto engine = Engine::open(std::move(o));
  if (!engine.ok()) return engine.status();
  engine_ = std::move(engine).value();
  store_.attach(engine_.get(), nullptr);
  return {};
}

Status StoreLifecycle::replay() {
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
    if (!report.status.ok()) {
      // Damage the mode stopped at, not a failure of the store: whether to
      // start anyway, and with which of the log, is the operator's choice.
      if (report.status.code() != ErrorCode::kCorruption || report.problems.empty()) return report.status;
      return Status(ErrorCode::kCorruption,
                    fmt::format("{}; to start anyway, losing the damaged writes: --recovery skip (passes "
                                "over the damage) or --recovery point-in-time (keeps only what precedes "
                                "it); docs/recovery.md explains the choices",
                                report.status.message()));
    }
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

WaitDurable StoreLifecycle::wait_durable() const {
  if (log_) return [log = log_.get()](Position p) { return log->wait_durable(p); };
  return [engine = engine_.get()](Position p) { return engine->sync_wal(p); };
}

// Everything goes to RocksDB's SST files and the listener discards the log;
// writes that still arrive stay in the log for the next start.
bool StoreLifecycle::close() {
  discarder_.stop();
  bool ok = true;
  auto checkpoint = engine_->checkpoint();
  if (Status s = engine_->flush(); !s.ok()) {
    fmt::print(stderr, "commitlog-kv: final flush: {}\n", s.to_string());
    ok = false;
  }
  if (!log_) return ok;
  // The listener discards on RocksDB's thread, maybe after Flush() returned.
  if (checkpoint.ok() && *checkpoint && ok) discarder_.wait_discarded(**checkpoint, std::chrono::seconds(10));
  if (Status closed = log_->close(); !closed.ok()) {
    fmt::print(stderr, "commitlog-kv: close: {}\n", closed.to_string());
    ok = false;
  }
  return ok;
}

}  // namespace commitlog::kv
