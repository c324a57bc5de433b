// SPDX-License-Identifier: Apache-2.0
#include "commitlog/write/sync_counters.h"

namespace commitlog {

void SyncCounters::count_flush(SyncReason reason, Duration duration, uint64_t entries,
                               uint64_t image, uint64_t file) {
  constexpr auto relaxed = std::memory_order_relaxed;
  flushes.fetch_add(1, relaxed);
  flushed_entries.fetch_add(entries, relaxed);
  flush_nanos.fetch_add(static_cast<uint64_t>(duration.count()), relaxed);
  image_bytes.fetch_add(image, relaxed);
  file_bytes.fetch_add(file, relaxed);
  by_reason[static_cast<size_t>(reason) % 8].fetch_add(1, relaxed);
  group_sizes[group_size_bucket(entries)].fetch_add(1, relaxed);
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(duration).count();
  flush_latency_us[group_size_bucket(static_cast<uint64_t>(us))].fetch_add(1, relaxed);
}

}  // namespace commitlog
