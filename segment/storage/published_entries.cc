// SPDX-License-Identifier: Apache-2.0
#include "segment/storage/published_entries.h"

#include <algorithm>
#include <atomic>
#include <cassert>
#include <chrono>
#include <optional>
#include <thread>

#include "segment/codec.h"
#include "segment/format.h"
#include "segment/platform/cpu_pause.h"

namespace commitlog {

// Producers never suspend between reserve() and the length store, so this
// wait is as long as one memcpy (or a direct payload's pwrite or LZ4 call)
// unless a producer thread was preempted, which with many producers on few
// CPUs happens, and the whole flush waits with it. So such waits are
// counted and timed (the metrics' seal_waits), at the cost of two clock
// reads per wait.
void PublishedEntries::wait_until(uint64_t from, uint64_t end) {
  uint64_t at = std::max(published_, from);
  unsigned spins = 0;
  std::optional<TimePoint> waiting_since;
  while (at < end) {
    // Entries are 8-byte aligned and the producer stores the length last,
    // with a release store (mapped_segment.cc).
    const uint32_t length =
        std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(image_ + at)).load(std::memory_order_acquire);
    if (length == 0) {
      if (!waiting_since) waiting_since = clock_.now();
      if (++spins < 1024) {
        cpu_pause();
      } else {
        std::this_thread::yield();
      }
      continue;
    }
    spins = 0;
    note_table(entry_table(image_ + at), at);
    at += format::align_up(length);
    ++count_;
  }
  assert(at == end);
  published_ = at;
  if (waiting_since) {
    ++waits_.seals;
    waits_.nanos += static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(clock_.now() - *waiting_since).count());
  }
}

void PublishedEntries::note_table(uint32_t table, uint64_t offset) {
  // Runs of one table are the common case; a new table costs one insertion.
  if (last_table_ < tables_.size() && tables_[last_table_].table == table) {
    tables_[last_table_].last_offset = offset;
    return;
  }
  auto it = std::lower_bound(tables_.begin(), tables_.end(), table,
                             [](const TableExtent& e, uint32_t t) { return e.table < t; });
  if (it == tables_.end() || it->table != table) it = tables_.insert(it, TableExtent{table, offset});
  it->last_offset = offset;
  last_table_ = static_cast<size_t>(it - tables_.begin());
}

}  // namespace commitlog
