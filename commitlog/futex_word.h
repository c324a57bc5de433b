// A 32-bit word that threads can sleep on until it changes: the Linux futex,
// with no spinning first (unlike std::atomic::wait in libstdc++ 12, whose
// sched_yield() rounds cost a lone producer 20 µs per flush on this project's
// machine, docs/benchmarks.md).
//
// Thread-safety: every member is thread-safe.
#pragma once

#include <atomic>
#include <cstdint>

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

}  // namespace commitlog
