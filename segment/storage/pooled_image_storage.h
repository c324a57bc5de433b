// SPDX-License-Identifier: Apache-2.0
// What the standard and direct storages share (segment/storage/standard_storage.cc,
// segment/storage/direct_storage.cc): the image is a pooled buffer that stage()
// writes to the file at the same offsets, so the file reads exactly as a
// mapped segment's; commit() is one fdatasync; payloads are copied into the
// image (write_direct() declines them).
#pragma once

#include <memory>
#include <span>
#include <string>

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
  Status commit(const StagedWrite&) const override { return file_->sync(); }
  bool write_direct(uint64_t, std::span<const std::byte>) override { return false; }

 protected:
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

  const std::unique_ptr<File> file_;
  PooledBuffer buffer_;
};

}  // namespace commitlog
