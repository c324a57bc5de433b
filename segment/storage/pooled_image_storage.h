// SPDX-License-Identifier: Apache-2.0
// What the standard and direct storages share (segment/storage/standard_storage.cc,
// segment/storage/direct_storage.cc): the image is a pooled buffer that stage()
// writes to the file at the same offsets, so the file reads exactly as a
// mapped segment's; commit() is one fdatasync. A large payload's producer
// writes its range itself (write_direct()), concurrently with the others,
// and stage() leaves that range out.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "segment/storage/segment_storage.h"

namespace commitlog {

// Before a header is written over a spare: it must be the file a segment
// of this size left.
inline Status check_spare_size(File& file, uint64_t expected) {
  auto size = file.size();
  if (!size.ok()) return size.status();
  if (*size == expected) return {};
  return Status::invalid_argument("a spare segment file of " + std::to_string(*size) + " bytes, not " +
                                  std::to_string(expected));
}

class PooledImageStorage : public SegmentStorage {
 public:
  Status commit(const StagedWrite&) const override;
  bool write_direct(uint64_t offset, std::span<const std::byte> payload, bool caller_blocks_thread) override;
  bool write_direct_filled(uint64_t offset, uint64_t length, bool caller_blocks_thread,
                           const std::function<bool(uint64_t end)>& fill) override;

 protected:
  using Range = std::pair<uint64_t, uint64_t>;  // [first, second) of the file

  PooledImageStorage(std::unique_ptr<File> file, PooledBuffer buffer)
      : file_(std::move(file)), buffer_(std::move(buffer)) {
    image_ = buffer_.data();
  }
  // A write of image bytes [offset, offset + length), staged for commit().
  static StagedWrite staged(uint64_t offset, uint64_t length, uint64_t file_bytes) {
    StagedWrite s;
    s.image_offset = offset;
    s.image_bytes = length;
    s.file_bytes = file_bytes;
    return s;
  }
  // The ranges of [from, to) that stage() writes from the image: all but
  // those producers wrote, in order; called first by every stage(). After the stage succeeded,
  // forget_written_below(to): a failed stage's retry covers them again.
  std::vector<Range> ranges_to_write(uint64_t from, uint64_t to);
  void forget_written_below(uint64_t to);
  // A producer wrote `range`: stage() leaves it out.
  void note_written(Range range);

  const std::unique_ptr<File> file_;
  PooledBuffer buffer_;

 private:
  // Of a payload at [from, to), the range its producer writes: empty when
  // it writes none. Direct: the whole blocks inside it.
  virtual Range producer_range(uint64_t from, uint64_t to) const = 0;
  // Whether that write waits for the device (direct I/O), which a fiber
  // must not do on its scheduler thread.
  virtual bool waits_for_device() const = 0;

  std::mutex written_mu_;
  std::vector<Range> written_;  // guarded by written_mu_: by producers, not staged yet
  // From a stage() (its ranges_to_write()) to the end of the commit after it.
  mutable std::atomic<bool> flushing_{false};
};

}  // namespace commitlog
