// SPDX-License-Identifier: Apache-2.0
#include "commitlog/util/epoch_pins.h"

namespace commitlog {
namespace {

// Threads take shards in turn, so up to kShards threads never share a line.
size_t this_thread_shard(size_t shards) {
  static std::atomic<size_t> next{0};
  thread_local const size_t shard = next.fetch_add(1, std::memory_order_relaxed) % shards;
  return shard;
}

}  // namespace

// The count is raised before the caller loads a pointer, and the reclaimer
// reads the counts after it unlinked the object and switched banks, all in
// one seq_cst order (a Dekker pattern): either the reclaimer sees this pin,
// or this reader's load sees the object already unlinked. A pin that read
// the old bank just before the switch and raises it just after is counted
// there; its load then sees the unlink all the same.
EpochPins::Pin EpochPins::pin() {
  const size_t bank = bank_.load(std::memory_order_seq_cst);
  std::atomic<int64_t>& count = counts_[bank][this_thread_shard(kShards)].pins;
  count.fetch_add(1, std::memory_order_seq_cst);
  return Pin(&count);
}

size_t EpochPins::begin_grace() { return bank_.fetch_xor(1, std::memory_order_seq_cst); }

bool EpochPins::grace_over(size_t bank) const {
  for (const Count& c : counts_[bank]) {
    if (c.pins.load(std::memory_order_seq_cst) != 0) return false;
  }
  return true;
}

}  // namespace commitlog
