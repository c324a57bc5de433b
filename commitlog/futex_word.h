// A 32-bit word that threads can sleep on until it changes: the Linux futex,
// with no spinning or yielding first (unlike std::atomic::wait in libstdc++
// 12, whose sched_yield() rounds add tens of µs to a lone producer's every
// flush). A caller that knows a short wait is
// coming spins itself first, bounded, with spin_until().
//
// Thread-safety: every member is thread-safe.
#pragma once

#include <atomic>
#include <cstdint>

#include "commitlog/clock.h"

namespace commitlog {

class FutexWord {
 public:
  uint32_t load() const { return word_.load(); }
  void store(uint32_t value) { word_.store(value); }
  uint32_t fetch_add(uint32_t value) { return word_.fetch_add(value); }
  // Sets the word if it equals `expected`; true if it did.
  bool compare_exchange(uint32_t expected, uint32_t desired) {
    return word_.compare_exchange_strong(expected, desired);
  }
  // Sleeps while the word equals `seen`. May return early (a signal), so a
  // caller re-checks what it waits for.
  void wait(uint32_t seen) const;
  // Wakes one, or every, thread sleeping in wait(): call after changing the word.
  void wake_one() const;
  void wake_all() const;

 private:
  std::atomic<uint32_t> word_{0};
};

// The CPU's hint that the caller is spinning (x86 pause, Arm yield).
inline void spin_pause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

// What spin_until() did: spins, those that ended without what they waited
// for (the caller then sleeps), and the time spent spinning.
struct SpinCounters {
  std::atomic<uint64_t> spins{0};
  std::atomic<uint64_t> missed{0};
  std::atomic<uint64_t> nanos{0};
};

// Calls done() until it returns true or `limit` has passed, reading the clock
// every 64 calls; returns done()'s last answer. For a wait that is about to
// sleep on a FutexWord when the wake-up would cost more than the wait.
// The limit is measured on `clock`.
template <typename Done>
bool spin_until(const Clock& clock, Done done, Duration limit, SpinCounters& counters) {
  const TimePoint start = clock.now();
  bool ready = false;
  while (!ready) {
    for (int i = 0; i < 64 && !(ready = done()); ++i) spin_pause();
    if (!ready && clock.now() - start >= limit) break;
  }
  ready = ready || done();
  counters.spins.fetch_add(1, std::memory_order_relaxed);
  if (!ready) counters.missed.fetch_add(1, std::memory_order_relaxed);
  counters.nanos.fetch_add(
      static_cast<uint64_t>((clock.now() - start).count()),
      std::memory_order_relaxed);
  return ready;
}

}  // namespace commitlog
