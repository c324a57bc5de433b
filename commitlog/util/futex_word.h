// SPDX-License-Identifier: Apache-2.0
// The log's one waiting primitive: a 32-bit word that threads sleep on until
// another thread changes it (the Linux futex: no mutex, one system call on
// each side, and no spinning or yielding first, unlike std::atomic::wait in
// libstdc++ 12). The sync thread sleeps on its state word, plain producer
// threads on the durable watermark's wake-up count (durable_waiters.h).
//
// Spinning is an option, off unless a spin limit is given
// (Options::spin_wait): a wait that the caller expects to be a short
// hand-off (wait(seen, deadline, /*may_spin=*/true)) first watches the word
// for up to the limit, so the waker's change ends it without a context
// switch. It is tried only while the previous spinning wait ended within the
// limit (not under a group window), and a spin that runs out backs off: after
// the n-th in a row, the next 2^n - 1 waits that would spin sleep at once (n
// at most 10), since a spin runs out when the thread it waits for cannot run
// meanwhile (both on one CPU). The spin state assumes one spinning waiter at
// a time; a race between two shifts the back-off by one wait.
//
// Every time read goes through the Clock, and a spin is a timed wait on it:
// it announces its end (Clock::wake_by_itself_at) as a sleep does, so on a
// manual clock it runs out only when the time is moved past that end, and
// a test sees that a wait spins, and ends the spin by moving the time.
//
// Thread-safety: every member is thread-safe.
#pragma once

#include <atomic>
#include <cstdint>

#include "commitlog/clock.h"

namespace commitlog {

// What the waits did: spins, those that ended without a change (the waiter
// then slept), the time spent spinning, and the waits that went to sleep
// (at once, or after a spin that ran out; counted just before the sleep).
struct SpinCounters {
  std::atomic<uint64_t> spins{0};
  std::atomic<uint64_t> missed{0};
  std::atomic<uint64_t> nanos{0};
  std::atomic<uint64_t> sleeps{0};
};

class FutexWord {
 public:
  // `clock` (which must outlive the word) times the spins and the previous
  // spinning wait; `spin_limit` zero never spins.
  explicit FutexWord(const Clock& clock, Duration spin_limit = Duration::zero())
      : clock_(clock), spin_limit_(spin_limit) {}

  uint32_t load() const { return word_.load(); }
  void store(uint32_t value) { word_.store(value); }
  uint32_t fetch_add(uint32_t value) { return word_.fetch_add(value); }
  // Sets the word if it equals `expected`; true if it did.
  bool compare_exchange(uint32_t expected, uint32_t desired) {
    return word_.compare_exchange_strong(expected, desired);
  }
  // Sleeps while the word equals `seen`, at the latest until `wake_at` on the
  // steady clock (TimePoint::max(): no time limit). With `may_spin`, spins
  // first as above. May return early (a signal), so a caller re-checks what
  // it waits for.
  void wait(uint32_t seen, TimePoint wake_at = TimePoint::max(), bool may_spin = false);
  // Wakes one, or every, thread sleeping in wait(): call after changing the word.
  void wake_one() const;
  void wake_all() const;

  const SpinCounters& spin_counters() const { return spins_; }

 private:
  // Spins until the word leaves `seen` or the limit passes; true if it left.
  bool spin(uint32_t seen);
  bool spin_backed_off();
  void sleep(uint32_t seen, TimePoint wake_at);

  std::atomic<uint32_t> word_{0};
  const Clock& clock_;
  const Duration spin_limit_;
  SpinCounters spins_;
  std::atomic<int64_t> last_spinning_wait_ns_{0};
  std::atomic<uint32_t> missed_in_row_{0};  // spins that ran out, in a row
  std::atomic<uint32_t> spins_to_skip_{0};  // the back-off left
};

}  // namespace commitlog
