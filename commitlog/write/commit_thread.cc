// SPDX-License-Identifier: Apache-2.0
#include "commitlog/write/commit_thread.h"

#include <cassert>

#include "commitlog/util/thread_name.h"

namespace commitlog {

CommitThread::CommitThread(std::function<void()> on_done) : on_done_(std::move(on_done)) {
  thread_ = std::thread([this] { run(); });
}

CommitThread::~CommitThread() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void CommitThread::start(std::function<Status()> job) {
  {
    std::lock_guard lock(mu_);
    assert(!job_ && !result_);
    job_ = std::move(job);
  }
  cv_.notify_all();
}

bool CommitThread::done() const {
  std::lock_guard lock(mu_);
  return result_.has_value();
}

Status CommitThread::wait() {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return result_.has_value(); });
  Status status = std::move(*result_);
  result_.reset();
  return status;
}

void CommitThread::run() {
  name_this_thread("cl-commit");
  std::unique_lock lock(mu_);
  while (true) {
    // A job in flight is finished before stopping: it holds the segments'
    // files, which their owner releases only after collecting it.
    cv_.wait(lock, [&] { return job_ || stopping_; });
    if (!job_) return;
    std::function<Status()> job = std::move(job_);
    job_ = nullptr;
    lock.unlock();
    Status status = job();
    lock.lock();
    result_ = std::move(status);
    cv_.notify_all();
    lock.unlock();
    on_done_();
    lock.lock();
  }
}

}  // namespace commitlog
