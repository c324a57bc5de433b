#include <algorithm>
#include <cstring>

#include "segment/segment_storage.h"

namespace commitlog {
namespace {

constexpr uint64_t kPrewriteChunk = 4096;

// The file holds the image at the same offsets, so the segment reader reads
// it exactly as a mapped segment's.
class StandardStorage final : public SegmentStorage {
 public:
  StandardStorage(std::unique_ptr<File> file, PooledBuffer buffer)
      : file_(std::move(file)), buffer_(std::move(buffer)) {
    image_ = buffer_.data();
  }

  Result<StagedWrite> stage(uint64_t offset, uint64_t length, bool) override {
    CL_RETURN_IF_ERROR(file_->write_at(offset, {image_ + offset, length}));
    StagedWrite staged;
    staged.image_offset = offset;
    staged.image_bytes = staged.file_bytes = length;
    return staged;
  }

  Status commit(const StagedWrite&) const override { return file_->sync(); }

  // A payload is copied into the image like any other: the flush's pwrite
  // copies it once more into the page cache, which a pwrite of its own
  // would do as well.
  bool write_direct(uint64_t, std::span<const std::byte>) override { return false; }

 private:
  std::unique_ptr<File> file_;
  PooledBuffer buffer_;
};

}  // namespace

Result<std::unique_ptr<SegmentStorage>> make_standard_storage(std::unique_ptr<File> file, PooledBuffer buffer,
                                                              uint64_t capacity,
                                                              std::span<const std::byte> header) {
  std::memcpy(buffer.data(), header.data(), header.size());
  for (uint64_t at = 0; at < capacity; at += kPrewriteChunk) {
    const uint64_t n = std::min(kPrewriteChunk, capacity - at);
    CL_RETURN_IF_ERROR(file->write_at(at, {buffer.data() + at, n}));
  }
  CL_RETURN_IF_ERROR(file->sync());
  return std::unique_ptr<SegmentStorage>(new StandardStorage(std::move(file), std::move(buffer)));
}

}  // namespace commitlog
