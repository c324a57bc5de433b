// SPDX-License-Identifier: Apache-2.0
// std::mutex as a capability the thread-safety analysis knows
// (thread_annotations.h), and its scoped lock.
#pragma once

#include <mutex>

#include "commitlog/util/thread_annotations.h"

namespace commitlog {

class CAPABILITY("mutex") Mutex {
 public:
  void lock() ACQUIRE() { mu_.lock(); }
  void unlock() RELEASE() { mu_.unlock(); }
  bool try_lock() TRY_ACQUIRE(true) { return mu_.try_lock(); }
  // For std::condition_variable, which waits on a std::unique_lock.
  std::mutex& native() { return mu_; }

 private:
  std::mutex mu_;
};

// Holds `mu` from construction to destruction; unlock() and lock() let it go
// and take it again in between (a loop that sleeps without the lock).
class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mu) ACQUIRE(mu) : mu_(mu) { mu_.lock(); }
  ~MutexLock() RELEASE() {
    if (held_) mu_.unlock();
  }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;
  void unlock() RELEASE() {
    mu_.unlock();
    held_ = false;
  }
  void lock() ACQUIRE() {
    mu_.lock();
    held_ = true;
  }

 private:
  Mutex& mu_;
  bool held_ = true;
};

}  // namespace commitlog
