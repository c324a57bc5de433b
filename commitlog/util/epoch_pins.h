// SPDX-License-Identifier: Apache-2.0
// Deferred freeing of objects that readers reach without a lock (the chain's
// segments): a reader holds a Pin while it uses a pointer it loaded; the one
// reclaimer frees an object it unlinked only once every pin that may have
// seen it is gone. A grace period in the manner of sleepable RCU: pins
// count in one of two banks, the reclaimer switches new pins to the other
// bank and waits, without blocking, for the old one to empty.
//
// Pins are counted per thread shard, so readers on different threads touch
// different cache lines. A pin may be held across a blocking wait; that
// only delays freeing.
//
// Thread-safety: pin() from any thread; begin_grace() and grace_over() from
// one reclaimer at a time.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace commitlog {

class EpochPins {
 public:
  class Pin {
   public:
    Pin(Pin&& other) noexcept : count_(other.count_) { other.count_ = nullptr; }
    Pin& operator=(Pin&&) = delete;
    ~Pin() {
      if (count_ != nullptr) count_->fetch_sub(1, std::memory_order_release);
    }

   private:
    friend class EpochPins;
    explicit Pin(std::atomic<int64_t>* count) : count_(count) {}
    std::atomic<int64_t>* count_;
  };

  // Loads made after this returns (seq_cst) see every unlink that a grace
  // period begun before it covers.
  [[nodiscard]] Pin pin();

  // Sends new pins to the other bank; returns the bank that must empty for
  // every object unlinked before this call to be freed.
  size_t begin_grace();
  // Whether no pin of `bank` is held: the grace period begun with it is over.
  bool grace_over(size_t bank) const;

 private:
  static constexpr size_t kShards = 32;
  struct alignas(64) Count {
    std::atomic<int64_t> pins{0};
  };
  std::atomic<size_t> bank_{0};
  Count counts_[2][kShards];
};

}  // namespace commitlog
