// SPDX-License-Identifier: Apache-2.0
#include "segment/storage/pooled_image_storage.h"

#include <algorithm>
#include <cstring>

namespace commitlog {

// The payload is copied into the image first (a sealed one is there
// already), as the flush would have it,
// and the producer writes from there: the image is aligned for direct I/O,
// its range is the producer's alone until the entry is published, and the
// caller's memory may be neither. A failed write leaves the range to the
// flush, as if the payload had only been copied.
//
// A direct write splits the device's work for the payload in three: its
// whole blocks, then the head and tail blocks with the flush. That pays only
// while a flush is running, whose commit the producer's write then overlaps;
// otherwise the next flush is as soon as the producer could write, and
// writes the payload with its neighbours in one request.
bool PooledImageStorage::write_direct(uint64_t offset, std::span<const std::byte> payload,
                                      bool caller_blocks_thread) {
  const Range range = producer_range(offset, offset + payload.size());
  if (range.second <= range.first) return false;
  if (waits_for_device() && (!caller_blocks_thread || !flushing_.load(std::memory_order_relaxed))) return false;
  if (payload.data() != image_ + offset) std::memcpy(image_ + offset, payload.data(), payload.size());
  if (!file_->write_at(range.first, {image_ + range.first, range.second - range.first}).ok()) return false;
  std::lock_guard lock(written_mu_);
  written_.push_back(range);
  return true;
}

Status PooledImageStorage::commit(const StagedWrite&) const {
  Status synced = file_->sync();
  flushing_.store(false, std::memory_order_relaxed);
  return synced;
}

std::vector<PooledImageStorage::Range> PooledImageStorage::ranges_to_write(uint64_t from, uint64_t to) {
  flushing_.store(true, std::memory_order_relaxed);
  std::vector<Range> written;
  {
    std::lock_guard lock(written_mu_);
    for (const Range& r : written_) {
      if (r.first >= from && r.second <= to) written.push_back(r);
    }
  }
  std::sort(written.begin(), written.end());
  std::vector<Range> out;
  uint64_t at = from;
  for (const Range& r : written) {
    if (r.first > at) out.push_back({at, r.first});
    at = r.second;
  }
  if (to > at) out.push_back({at, to});
  return out;
}

void PooledImageStorage::forget_written_below(uint64_t to) {
  std::lock_guard lock(written_mu_);
  std::erase_if(written_, [&](const Range& r) { return r.second <= to; });
}

}  // namespace commitlog
