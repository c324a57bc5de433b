// Where a segment's image lives while it is written, and how a range of it is
// made durable:
//  - mapped: the image is the mmapped file; persist() is msync.
//  - compressed: the image is a pooled buffer; persist() compresses the range
//    with LZ4, appends it to the file as a section (format.h) and fdatasyncs.
// The segment writer (mapped_segment.h) works on the image only, so both
// kinds share its reservation, publication and marker logic.
//
// Thread-safety: image() bytes are written by producers in disjoint
// reservations; persist() is called by the sync thread only.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "segment/buffer_pool.h"
#include "segment/file_system.h"

namespace commitlog {

class SegmentStorage {
 public:
  virtual ~SegmentStorage() = default;
  std::byte* image() const { return image_; }
  // Makes image bytes [offset, offset + length) durable.
  virtual Status persist(uint64_t offset, uint64_t length) = 0;
  // Bytes of the image persisted and the bytes that took in the file.
  uint64_t image_bytes_persisted() const { return image_bytes_; }
  uint64_t file_bytes_written() const { return file_bytes_; }

 protected:
  std::byte* image_ = nullptr;
  uint64_t image_bytes_ = 0;
  uint64_t file_bytes_ = 0;
};

// Preallocates and maps `file` (capacity bytes) and writes `header` into it, durably.
Result<std::unique_ptr<SegmentStorage>> make_mapped_storage(std::unique_ptr<File> file,
                                                            uint64_t capacity,
                                                            std::span<const std::byte> header);
// Writes `header` at the start of `file`, durably; the image is `buffer`.
Result<std::unique_ptr<SegmentStorage>> make_compressed_storage(std::unique_ptr<File> file,
                                                                PooledBuffer buffer,
                                                                uint64_t segment_id,
                                                                uint64_t buffer_capacity,
                                                                std::span<const std::byte> header);

}  // namespace commitlog
