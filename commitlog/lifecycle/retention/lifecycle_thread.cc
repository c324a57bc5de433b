// SPDX-License-Identifier: Apache-2.0
#include "commitlog/lifecycle/retention/lifecycle_thread.h"

#include <utility>

#include "commitlog/util/thread_name.h"

namespace commitlog {
namespace {

// The lifecycle thread this is, if any: read by on_own_thread(), which
// std::thread's id could not serve while join() waits for it.
thread_local const LifecycleThread* running_here = nullptr;

}  // namespace

LifecycleThread::LifecycleThread(Clock& clock, Pass pass)
    : clock_(clock), pass_(std::move(pass)), clock_moves_(clock, [this] {
        std::lock_guard lock(mu_);
        cv_.notify_all();
      }) {}

LifecycleThread::~LifecycleThread() {
  if (request_stop()) join();
}

bool LifecycleThread::on_own_thread() const { return running_here == this; }

void LifecycleThread::start(bool work) {
  {
    std::lock_guard lock(mu_);
    work_ = work;
  }
  thread_ = std::thread([this] { run(); });
}

void LifecycleThread::wake() {
  {
    std::lock_guard lock(mu_);
    work_ = true;
  }
  cv_.notify_one();
}

bool LifecycleThread::request_stop() {
  std::lock_guard lock(mu_);
  if (stopped_) return false;
  stopped_ = stopping_ = true;
  return true;
}

void LifecycleThread::join() {
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool LifecycleThread::stopped() const {
  std::lock_guard lock(mu_);
  return stopped_;
}

void LifecycleThread::run() {
  name_this_thread("cl-segments");
  running_here = this;
  std::unique_lock lock(mu_);
  while (true) {
    const bool stopping = stopping_;
    work_ = false;
    lock.unlock();
    const std::optional<Duration> next = pass_();
    lock.lock();
    if (stopping) return;
    const auto due = [&] { return work_ || stopping_; };
    if (next) {
      wait_until(clock_, cv_, lock, clock_.now() + *next, due);
    } else {
      cv_.wait(lock, due);
    }
  }
}

}  // namespace commitlog
