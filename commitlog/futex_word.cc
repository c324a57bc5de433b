#include "commitlog/futex_word.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>

namespace commitlog {
namespace {

static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t));

// Private futexes: the word is never shared with another process.
void futex(const std::atomic<uint32_t>& word, int op, uint32_t value) {
  ::syscall(SYS_futex, reinterpret_cast<const uint32_t*>(&word), op | FUTEX_PRIVATE_FLAG, value,
            nullptr, nullptr, 0);
}

}  // namespace

void FutexWord::wait(uint32_t seen) const {
  if (word_.load() == seen) futex(word_, FUTEX_WAIT, seen);
}

void FutexWord::wake_one() const { futex(word_, FUTEX_WAKE, 1); }

void FutexWord::wake_all() const { futex(word_, FUTEX_WAKE, INT_MAX); }

}  // namespace commitlog
