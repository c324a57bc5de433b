// SPDX-License-Identifier: Apache-2.0
// The log's second thread for durability, beside the sync thread, in logs
// whose segments are compressed: it runs the fdatasync half of a flush (a
// "commit"), so that the sync thread can meanwhile compress and write the
// next flush (flush_pipeline.h). One job at a time.
//
// Thread-safety: start(), done() and wait() are called by one thread (the
// sync thread). The job runs on the commit thread; `on_done` runs there too,
// after each job, once wait() would no longer block.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

#include "commitlog/status.h"

namespace commitlog {

class CommitThread {
 public:
  explicit CommitThread(std::function<void()> on_done);
  ~CommitThread();  // waits for the job in flight, then stops the thread

  CommitThread(const CommitThread&) = delete;
  CommitThread& operator=(const CommitThread&) = delete;

  // Runs `job` on the commit thread. REQUIRES: no job in flight (none
  // started, or the last one collected by wait()).
  void start(std::function<Status()> job);
  // True once the job in flight has returned (wait() would not block).
  bool done() const;
  // Blocks until the job in flight has returned, and returns its status.
  // REQUIRES: a job was started and not yet collected.
  [[nodiscard]] Status wait();

 private:
  void run();

  const std::function<void()> on_done_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::function<Status()> job_;   // guarded by mu_; set: to run
  std::optional<Status> result_;  // guarded by mu_; set: returned, not collected
  bool stopping_ = false;         // guarded by mu_
  std::thread thread_;
};

}  // namespace commitlog
