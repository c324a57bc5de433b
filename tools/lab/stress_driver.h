// SPDX-License-Identifier: Apache-2.0
// The producers of one `commitlog stress` run (stress_command.cc): N threads
// of M fibers (M = 1: the thread itself appends, a plain-thread producer),
// producer P = t*M + f appending the workload of stress_workload.h from its
// resume point, writing an ack line per acknowledged append
// (stress_acks.h), and with `discard` the store's flushes that discard the
// log behind them (stress_discarder.h).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "commitlog/commit_log.h"
#include "tools/lab/stress_discarder.h"

namespace commitlog::tools::stress {

struct DriverOptions {
  int threads = 4;
  int fibers = 4;
  uint64_t max_size = 0;
  double duration = 0;  // seconds; 0: until killed
  double rate = 0;      // appends per second of all producers; 0: unpaced
  AppendWait wait = AppendWait::kPolicy;
  bool wait_later = false;  // after an append that does not wait, wait_durable()
  bool discard = false;     // REQUIRES: an acks file
  std::string acks;         // its path, for messages
};

class Driver {
 public:
  // `next[P]`: the first S producer P appends. `ack_fd`: the acks file open
  // for appending, or -1. `log` and `ack_fd` must outlive the driver.
  // `discarded`: with options.discard, called after each discard.
  Driver(CommitLog& log, const DriverOptions& options, int ack_fd, std::vector<uint64_t> next,
         Discarder::Discarded discarded = {});
  ~Driver();

  // Appends until the duration ends or an append fails; with `discard`,
  // stops the discarder before it returns.
  void run();

  uint64_t acked() const { return acked_.load(); }
  uint64_t discards() const { return discarder_ ? discarder_->discards() : 0; }
  // The first failure of an append, an ack line or a discard.
  Status error() const;

 private:
  void produce(uint64_t p, uint64_t s);
  uint64_t kept_rounds() const;
  void fail(const std::string& what, const Status& status);

  CommitLog& log_;
  const DriverOptions options_;
  const int ack_fd_;
  const std::vector<uint64_t> next_;
  const bool seals_kept_;
  std::optional<TimePoint> deadline_;
  Duration interval_{};  // between one producer's appends; zero: no pacing
  std::unique_ptr<Discarder> discarder_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> acked_{0};
  mutable std::mutex mu_;
  Status error_;  // guarded by mu_
};

}  // namespace commitlog::tools::stress
