// SPDX-License-Identifier: Apache-2.0
// What the sync loop did, for CommitLog::stats() and metrics(). Written by
// whoever runs a round (the sync thread, or a producer leading one: rounds
// are serialized), read by anyone (relaxed atomics).
#pragma once

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>

#include "commitlog/sync_policy.h"

namespace commitlog {

struct SyncCounters {
  std::atomic<uint64_t> flushes{0};          // rounds that made data durable
  std::atomic<uint64_t> led_flushes{0};      // ... run on a producer's thread (lead_flush)
  std::atomic<uint64_t> seals{0};            // marker-only rounds
  std::atomic<uint64_t> flushed_entries{0};  // mutations made durable
  std::atomic<uint64_t> flush_nanos{0};      // time spent in flush rounds
  std::atomic<uint64_t> image_bytes{0};      // segment image bytes flushed
  std::atomic<uint64_t> file_bytes{0};       // the file bytes they took
  std::atomic<uint64_t> by_reason[kSyncReasons]{};  // flushes per SyncReason
  std::atomic<uint64_t> seal_waits{0};       // seals that waited for a producer's entry
  std::atomic<uint64_t> seal_wait_nanos{0};  // ... and how long
  std::atomic<uint64_t> sync_failures{0};    // flushes whose stage or commit failed
  // Flushes by group size (mutations they made durable): bucket 0 counts
  // empty flushes, bucket b >= 1 groups of [2^(b-1), 2^b) mutations, the last
  // bucket everything larger.
  static constexpr size_t kGroupSizeBuckets = 24;
  static size_t group_size_bucket(uint64_t mutations) {
    return std::min<size_t>(static_cast<size_t>(std::bit_width(mutations)), kGroupSizeBuckets - 1);
  }
  std::atomic<uint64_t> group_sizes[kGroupSizeBuckets]{};
  // Flushes by duration in µs, in the same log-2 buckets.
  std::atomic<uint64_t> flush_latency_us[kGroupSizeBuckets]{};

  // One flush that made `entries` mutations durable in `duration`.
  void count_flush(SyncReason reason, Duration duration, uint64_t entries, uint64_t image,
                   uint64_t file);
};

}  // namespace commitlog
