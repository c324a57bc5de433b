#include "commitlog/durable_waiters.h"

namespace commitlog {

TimePoint DurableWaiters::last_flush_started() const {
  return TimePoint(Duration(last_flush_started_ns_.load(std::memory_order_acquire)));
}

Status DurableWaiters::wait_durable(uint64_t packed) {
  if (durable(packed)) return {};
  std::unique_lock lock(mu_);
  // waiting_ is raised before the last check, and advance() reads it after
  // storing the watermark (both seq_cst), so a wake-up cannot be missed.
  waiting_.fetch_add(1);
  cv_.wait(lock, [&] { return durable_.load() > packed || failed_.load(); });
  waiting_.fetch_sub(1);
  if (durable_.load() > packed) return {};
  return error_;
}

Status DurableWaiters::wait_flush_started_after(TimePoint since) {
  const int64_t since_ns = since.time_since_epoch().count();
  if (last_flush_started_ns_.load() > since_ns) return {};
  std::unique_lock lock(mu_);
  waiting_.fetch_add(1);
  cv_.wait(lock, [&] { return last_flush_started_ns_.load() > since_ns || failed_.load(); });
  waiting_.fetch_sub(1);
  return failed_.load() ? error_ : Status{};
}

void DurableWaiters::advance(uint64_t packed, TimePoint flush_started) {
  last_flush_started_ns_.store(flush_started.time_since_epoch().count());
  if (packed > durable_.load()) durable_.store(packed);
  if (waiting_.load() > 0) notify();
}

void DurableWaiters::fail(const Status& error) {
  {
    std::lock_guard lock(mu_);
    if (failed_.load()) return;
    error_ = error;
    failed_.store(true);
  }
  cv_.notify_all();
}

Status DurableWaiters::error() const {
  std::lock_guard lock(mu_);
  return error_;
}

void DurableWaiters::notify() {
  { std::lock_guard lock(mu_); }  // orders the store before a waiter's check
  cv_.notify_all();
}

}  // namespace commitlog
