// SPDX-License-Identifier: Apache-2.0
// `commitlog stress --discard`: a store's memtable flushes, played against
// the log. Once an acknowledged append lands in a newer segment than any
// before it, the flush point seen before that one (the first acknowledged
// position seen in the previous segment) is written to the acks file
// ("discard <seg>:<off>", stress_acks.h) and synced, and only then
// discarded for every table. So the log keeps about two segments behind the
// newest acknowledgement, the segments below are recycled or deleted as the
// access mode says, and the acks file says which acknowledged mutations may
// be gone.
//
// Thread-safety: acknowledged() may be called from any thread or fiber; it
// takes a short lock and never suspends. The writes, syncs and discards run
// on the discarder's own thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

#include "commitlog/commit_log.h"

namespace commitlog::tools::stress {

class Discarder {
 public:
  // Called on the discarder's thread after each discard, with its point.
  using Discarded = std::function<void(Position)>;

  // `log` and `ack_fd` (the acks file, open for appending) must outlive the
  // discarder.
  Discarder(CommitLog& log, int ack_fd, Discarded discarded);
  ~Discarder();
  Discarder(const Discarder&) = delete;
  Discarder& operator=(const Discarder&) = delete;

  // After the ack line of the append at `position` was written.
  void acknowledged(Position position);
  // Ends the thread after the discard under way (before the log is
  // closed); returns the first failure of a write, sync or discard.
  [[nodiscard]] Status stop();
  uint64_t discards() const;
  // Whether a write, sync or discard failed: the run should stop.
  bool failed() const { return failed_.load(std::memory_order_relaxed); }

 private:
  void run();

  CommitLog& log_;
  const int ack_fd_;
  const Discarded discarded_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::optional<Position>
      seen_;  // the first acknowledgement seen in the newest segment; guarded by mu_
  std::optional<Position> due_;  // the next point to discard up to; guarded by mu_
  bool stopping_ = false;        // guarded by mu_
  uint64_t discards_ = 0;        // guarded by mu_
  Status error_;                 // guarded by mu_
  std::atomic<bool> failed_{false};
  std::thread thread_;
};

}  // namespace commitlog::tools::stress
