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
  note_written(range);
  return true;
}

// Pieces of the filled write: each is one device request (which in a
// virtual machine costs an exit to submit), so large ones; a payload of
// several overlaps the filling of each with the device's write of the one
// before.
constexpr size_t kFillPiece = 1 << 20;

// As in write_direct(), the producer's write pays when it overlaps
// something: a running flush's commit, or here also the filling of the
// payload's later pieces.
bool PooledImageStorage::write_direct_filled(uint64_t offset, uint64_t length, bool caller_blocks_thread,
                                             const std::function<bool(uint64_t end)>& fill) {
  const Range range = producer_range(offset, offset + length);
  const bool overlaps = flushing_.load(std::memory_order_relaxed) || range.second - range.first > kFillPiece;
  if (range.second <= range.first || (waits_for_device() && (!caller_blocks_thread || !overlaps))) {
    (void)fill(offset + length);
    return false;
  }
  const Status written = file_->write_filled_at(range.first, {image_ + range.first, range.second - range.first},
                                                kFillPiece, [&](size_t end) { return fill(range.first + end); });
  if (!fill(offset + length) || !written.ok()) return false;
  note_written(range);
  return true;
}

void PooledImageStorage::note_written(Range range) {
  std::lock_guard lock(written_mu_);
  written_.push_back(range);
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
