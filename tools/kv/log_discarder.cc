// SPDX-License-Identifier: Apache-2.0
#include "tools/kv/log_discarder.h"

#include <cstdio>

#include <fmt/core.h>

#include "commitlog/util/thread_name.h"
#include "tools/kv/mutation.h"

namespace commitlog::kv {

LogDiscarder::~LogDiscarder() { stop(); }

void LogDiscarder::request_flush() {
  {
    std::lock_guard lock(mu_);
    flush_requested_ = true;
    ++report_.flush_requests;
  }
  cv_.notify_all();
}

// A repeated error is printed once: a log that refuses every discard would
// otherwise print one line per RocksDB flush.
void LogDiscarder::note_error(const std::string& what, const Status& s) {
  const std::string text = what + ": " + s.to_string();
  if (report_.last_error == text) return;
  report_.last_error = text;
  fmt::print(stderr, "commitlog-kv: {}\n", text);
}

void LogDiscarder::flushed(Position checkpoint) {
  {
    std::lock_guard lock(mu_);
    if (!report_.flushed || *report_.flushed < checkpoint) report_.flushed = checkpoint;
  }
  CommitLog* log = log_.load();
  if (log == nullptr) return;  // still replaying: attach() discards
  Status s = log->discard(kDataTable, checkpoint);
  std::lock_guard lock(mu_);
  if (!s.ok()) {
    note_error("discard", s);
    return;
  }
  ++report_.discards;
  if (!report_.discarded || *report_.discarded < checkpoint) report_.discarded = checkpoint;
  cv_.notify_all();
}

// The segments of earlier runs go too: a position below the log's first
// segment covers them, so an idle run leaves only its own segment behind.
void LogDiscarder::attach(CommitLog* log, std::optional<Position> covered) {
  log_.store(log);
  std::optional<Position> newest;
  {
    std::lock_guard lock(mu_);
    newest = report_.flushed ? report_.flushed : covered;
  }
  flushed(newest.value_or(Position{}));
}

void LogDiscarder::start(Engine& engine) {
  thread_ = std::thread([this, &engine] {
    name_this_thread("kv-flusher");
    flush_loop(engine);
  });
}

void LogDiscarder::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

// RocksDB's flush blocks on I/O, so it runs here rather than on the log's
// thread that asked for it or on a worker; RocksDB's listener then calls
// flushed().
void LogDiscarder::flush_loop(Engine& engine) {
  std::unique_lock lock(mu_);
  while (true) {
    cv_.wait(lock, [&] { return stopping_ || flush_requested_; });
    if (stopping_) return;
    flush_requested_ = false;
    lock.unlock();
    Status s = engine.flush();
    lock.lock();
    if (!s.ok()) note_error("flush", s);
  }
}

bool LogDiscarder::wait_discarded(Position checkpoint, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, timeout, [&] { return report_.discarded && *report_.discarded >= checkpoint; });
}

LogDiscarder::Report LogDiscarder::report() const {
  std::lock_guard lock(mu_);
  return report_;
}

}  // namespace commitlog::kv
