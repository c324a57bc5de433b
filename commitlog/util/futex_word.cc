// SPDX-License-Identifier: Apache-2.0
#include "commitlog/util/futex_word.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <climits>

#include "segment/platform/cpu_pause.h"

namespace commitlog {
namespace {

static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t));

// Private futexes: the word is never shared with another process.
// FUTEX_WAIT_BITSET takes an absolute CLOCK_MONOTONIC time, the steady clock's.
void futex_wait(const std::atomic<uint32_t>& word, uint32_t seen, TimePoint wake_at) {
  timespec until{};
  const timespec* timeout = nullptr;
  if (wake_at != TimePoint::max()) {
    const auto ns = std::max<int64_t>(0, wake_at.time_since_epoch().count());
    until.tv_sec = static_cast<time_t>(ns / 1000000000);
    until.tv_nsec = static_cast<long>(ns % 1000000000);
    timeout = &until;
  }
  ::syscall(SYS_futex, reinterpret_cast<const uint32_t*>(&word),
            FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG, seen, timeout, nullptr, FUTEX_BITSET_MATCH_ANY);
}

void futex_wake(const std::atomic<uint32_t>& word, int count) {
  ::syscall(SYS_futex, reinterpret_cast<const uint32_t*>(&word), FUTEX_WAKE | FUTEX_PRIVATE_FLAG,
            count, nullptr, nullptr, 0);
}

}  // namespace

void FutexWord::wait(uint32_t seen, TimePoint wake_at, bool may_spin) {
  if (word_.load() != seen) return;
  if (!may_spin || spin_limit_ == Duration::zero()) {
    sleep(seen, wake_at);
    return;
  }
  const TimePoint start = clock_.now();
  const bool short_waits =
      Duration(last_spinning_wait_ns_.load(std::memory_order_relaxed)) <= spin_limit_;
  if (!(short_waits && !spin_backed_off() && spin(seen))) sleep(seen, wake_at);
  last_spinning_wait_ns_.store((clock_.now() - start).count(), std::memory_order_relaxed);
}

void FutexWord::sleep(uint32_t seen, TimePoint wake_at) {
  spins_.sleeps.fetch_add(1, std::memory_order_relaxed);
  futex_wait(word_, seen, wake_at);
}

// The clock is read every 64 pauses: a spin is short next to a clock read.
bool FutexWord::spin(uint32_t seen) {
  const TimePoint start = clock_.now();
  const TimePoint end = start + spin_limit_;
  clock_.wake_by_itself_at(end);  // announces the spin; on any clock it ends at `end`
  bool changed = false;
  while (!changed) {
    for (int i = 0; i < 64 && !(changed = word_.load() != seen); ++i) cpu_pause();
    if (!changed && clock_.now() >= end) break;
  }
  spins_.spins.fetch_add(1, std::memory_order_relaxed);
  spins_.nanos.fetch_add(static_cast<uint64_t>((clock_.now() - start).count()),
                         std::memory_order_relaxed);
  constexpr uint32_t kMaxBackoffDoublings = 10;
  if (changed) {
    missed_in_row_.store(0, std::memory_order_relaxed);
    return true;
  }
  spins_.missed.fetch_add(1, std::memory_order_relaxed);
  const uint32_t n =
      std::min(missed_in_row_.load(std::memory_order_relaxed) + 1, kMaxBackoffDoublings);
  missed_in_row_.store(n, std::memory_order_relaxed);
  spins_to_skip_.store((1u << n) - 1, std::memory_order_relaxed);
  return false;
}

bool FutexWord::spin_backed_off() {
  const uint32_t skip = spins_to_skip_.load(std::memory_order_relaxed);
  if (skip == 0) return false;
  spins_to_skip_.store(skip - 1, std::memory_order_relaxed);
  return true;
}

void FutexWord::wake_one() const { futex_wake(word_, 1); }

void FutexWord::wake_all() const { futex_wake(word_, INT_MAX); }

}  // namespace commitlog
