// SPDX-License-Identifier: Apache-2.0
#include "tools/lab/stress_driver.h"

#include <algorithm>
#include <chrono>
#include <thread>
#include <utility>

#include <boost/fiber/all.hpp>
#include <fmt/core.h>

#include "tools/lab/stress_acks.h"
#include "tools/lab/stress_workload.h"

namespace commitlog::tools::stress {

Driver::Driver(CommitLog& log, const DriverOptions& options, int ack_fd, std::vector<uint64_t> next,
               Discarder::Discarded discarded)
    : log_(log),
      options_(options),
      ack_fd_(ack_fd),
      next_(std::move(next)),
      seals_kept_(log.metrics().disk_access_mode == "mmap") {
  if (options.duration > 0) {
    deadline_ = SteadyClock::now() + std::chrono::duration_cast<Duration>(
                                         std::chrono::duration<double>(options.duration));
  }
  if (options.rate > 0) {
    interval_ = std::chrono::duration_cast<Duration>(
        std::chrono::duration<double>(options.threads * options.fibers / options.rate));
  }
  if (options.discard && ack_fd >= 0) {
    discarder_ = std::make_unique<Discarder>(log, ack_fd, std::move(discarded));
  }
}

Driver::~Driver() = default;

void Driver::run() {
  std::vector<std::thread> threads;
  for (int t = 0; t < options_.threads; ++t) {
    threads.emplace_back([this, t] {
      if (options_.fibers == 1) {  // the thread appends itself, as a plain-thread producer
        const auto p = static_cast<uint64_t>(t);
        produce(p, p < next_.size() ? next_[p] : 0);
        return;
      }
      std::vector<boost::fibers::fiber> fibers;
      for (int f = 0; f < options_.fibers; ++f) {
        const auto p = static_cast<uint64_t>(t) * static_cast<uint64_t>(options_.fibers) +
                       static_cast<uint64_t>(f);
        fibers.emplace_back([this, p] { produce(p, p < next_.size() ? next_[p] : 0); });
      }
      for (auto& fiber : fibers) fiber.join();
    });
  }
  for (auto& thread : threads) thread.join();
  if (discarder_) {
    if (Status stopped = discarder_->stop(); !stopped.ok()) fail("--discard", stopped);
  }
}

Status Driver::error() const {
  std::lock_guard lock(mu_);
  return error_;
}

void Driver::produce(uint64_t p, uint64_t s) {
  std::string payload;
  TimePoint slot = SteadyClock::now();
  while (!stop_.load(std::memory_order_relaxed)) {
    if (discarder_ && discarder_->failed()) return stop_.store(true);
    make_payload(p, s, options_.max_size, payload);
    auto position = log_.append(table_of(p), payload, {.wait = options_.wait});
    if (!position.ok()) {
      return fail(fmt::format("producer {} s {}: append", p, s), position.status());
    }
    if (options_.wait_later) {
      Status durable = log_.wait_durable(*position);
      if (!durable.ok()) return fail(fmt::format("producer {} s {}: wait_durable", p, s), durable);
    }
    if (ack_fd_ >= 0) {
      char line[kMaxAckLineSize];
      const size_t length = format_ack_line(line, p, s, kept_rounds(), *position);
      Status written = write_all(ack_fd_, std::string_view(line, length));
      if (!written.ok()) return fail(options_.acks, written);
      if (discarder_) discarder_->acknowledged(*position);
    }
    acked_.fetch_add(1, std::memory_order_relaxed);
    ++s;
    if (deadline_ && SteadyClock::now() >= *deadline_) stop_.store(true);
    if (interval_ > Duration::zero()) {
      // After a stall, go on at the rate instead of catching up in a burst.
      slot = std::max(slot + interval_, SteadyClock::now() - interval_);
      boost::this_fiber::sleep_until(slot);
    } else {
      // An append that returns at once (periodic) never suspends the fiber.
      boost::this_fiber::yield();
    }
  }
}

// The log's rounds so far that put what they cover where a kill -9 cannot
// take it: flushes, and with mapped segments the seals too (their markers
// are in the page cache). Read after an append returned, so the second
// round after it covers that append (stress_acks.h).
uint64_t Driver::kept_rounds() const {
  const CommitLogStats stats = log_.stats();
  return stats.flushes + (seals_kept_ ? stats.seals : 0);
}

void Driver::fail(const std::string& what, const Status& status) {
  std::lock_guard lock(mu_);
  if (error_.ok()) error_ = Status(status.code(), what + ": " + status.message());
  stop_.store(true);
}

}  // namespace commitlog::tools::stress
