// SPDX-License-Identifier: Apache-2.0
// The lifecycle thread ("cl-segments"): runs a pass over the segments
// (segment_lifecycle.h) whenever there is work, when the pass asks to look
// again after a while, and once more when stopping. Passes run with no lock
// held, so the embedder's callbacks they make may call back into the log.
//
// Thread-safety: wake(), stopped() and on_own_thread() from any thread;
// start(), request_stop() and join() from the owner's, never from this
// thread (join() would wait for itself).
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

#include "commitlog/util/clock_wait.h"

namespace commitlog {

class LifecycleThread {
 public:
  // One pass; returns when the next one is due without new work (nullopt:
  // only on work). Delays are on `clock`, which must outlive this object.
  using Pass = std::function<std::optional<Duration>()>;
  LifecycleThread(Clock& clock, Pass pass);
  ~LifecycleThread();  // request_stop() and join()

  LifecycleThread(const LifecycleThread&) = delete;
  LifecycleThread& operator=(const LifecycleThread&) = delete;

  // Starts the thread: its first pass runs at once if `work`.
  void start(bool work);
  // There is work: a pass runs soon.
  void wake();
  // Stopping takes two calls, so that the owner can act in between: the
  // first marks the thread stopping (true the first time only), join() wakes
  // it for its last pass and waits for that to end.
  bool request_stop();
  void join();
  bool stopped() const;  // request_stop() was called
  // Whether the caller runs on this thread (in one of the embedder's
  // callbacks), which join() would wait for.
  bool on_own_thread() const;

 private:
  void run();

  Clock& clock_;
  const Pass pass_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool work_ = false;      // guarded by mu_
  bool stopping_ = false;  // guarded by mu_
  bool stopped_ = false;   // guarded by mu_
  ClockSubscription clock_moves_;  // wakes run() for a pass due on the clock; after mu_ and cv_
  std::thread thread_;
};

}  // namespace commitlog
