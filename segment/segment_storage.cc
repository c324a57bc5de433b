#include "segment/segment_storage.h"

#include <algorithm>
#include <cstring>

#include "segment/checksum.h"
#include "segment/compression.h"
#include "segment/format.h"

namespace commitlog {
namespace {

class MappedStorage final : public SegmentStorage {
 public:
  explicit MappedStorage(std::unique_ptr<File> file, std::byte* mapping) : file_(std::move(file)) {
    image_ = mapping;
  }
  Status persist(uint64_t offset, uint64_t length) override {
    CL_RETURN_IF_ERROR(file_->sync_mapped(offset, length));
    image_bytes_ += length;
    file_bytes_ += length;
    return {};
  }

 private:
  std::unique_ptr<File> file_;
};

class CompressedStorage final : public SegmentStorage {
 public:
  CompressedStorage(std::unique_ptr<File> file, PooledBuffer buffer, uint64_t segment_id,
                    uint64_t capacity)
      : file_(std::move(file)), buffer_(std::move(buffer)), segment_id_(segment_id), capacity_(capacity) {
    image_ = buffer_.data();
  }

  // The section is written with one pwrite and made durable with fdatasync;
  // a section that does not shrink is stored raw, flagged.
  Status persist(uint64_t offset, uint64_t length) override {
    std::span<const std::byte> input{image_ + offset, length};
    scratch_.resize(format::kSectionHeaderSize + lz4_bound(length) + format::kAlignment);
    std::byte* header = scratch_.data();
    std::byte* stored = header + format::kSectionHeaderSize;
    uint32_t flags = 0;
    size_t stored_length = 0;
    if (auto n = lz4_compress(input, {stored, scratch_.size() - format::kSectionHeaderSize})) {
      stored_length = *n;
    } else {
      flags = format::kSectionRaw;
      stored_length = length;
      if (scratch_.size() < format::kSectionHeaderSize + length + format::kAlignment) {
        scratch_.resize(format::kSectionHeaderSize + length + format::kAlignment);
        header = scratch_.data();
        stored = header + format::kSectionHeaderSize;
      }
      std::memcpy(stored, input.data(), length);
    }
    const size_t total = format::align_up(format::kSectionHeaderSize + stored_length);
    std::memset(stored + stored_length, 0, total - format::kSectionHeaderSize - stored_length);
    std::memset(header, 0, format::kSectionHeaderSize);
    store_u64(header + format::kSectionImageOffset, offset);
    store_u32(header + format::kSectionImageLength, static_cast<uint32_t>(length));
    store_u32(header + format::kSectionStoredLength, static_cast<uint32_t>(stored_length));
    store_u32(header + format::kSectionFlags, flags);
    store_u64(header + format::kSectionStoredChecksum, checksum({stored, stored_length}));
    store_u64(header + format::kSectionHeaderChecksum,
              section_header_checksum(header, segment_id_, file_offset_));
    if (file_offset_ + total > allocated_) {
      // Space is reserved ahead in steps: a write that also grows the file
      // makes every fdatasync commit a metadata change (measured: ~30x slower).
      const uint64_t step = std::max<uint64_t>(std::min(kAllocationStep, capacity_), total);
      CL_RETURN_IF_ERROR(file_->allocate(allocated_, step));
      allocated_ += step;
    }
    CL_RETURN_IF_ERROR(file_->write_at(file_offset_, {header, total}));
    CL_RETURN_IF_ERROR(file_->sync());
    file_offset_ += total;
    image_bytes_ += length;
    file_bytes_ += total;
    return {};
  }

 private:
  std::unique_ptr<File> file_;
  PooledBuffer buffer_;
  const uint64_t segment_id_;
  const uint64_t capacity_;
  static constexpr uint64_t kAllocationStep = 1 << 20;
  uint64_t file_offset_ = format::kHeaderSize;
  uint64_t allocated_ = format::kHeaderSize;
  std::vector<std::byte> scratch_;
};

}  // namespace

Result<std::unique_ptr<SegmentStorage>> make_mapped_storage(std::unique_ptr<File> file,
                                                            uint64_t capacity,
                                                            std::span<const std::byte> header) {
  // A plain fallocate, not zero-filling writes: on ext4 a zero-filled file can
  // sit in the page cache as large folios, and msync of one dirty 4 KiB page
  // then writes the whole folio (about 1 MiB measured). See FORMAT.md.
  CL_RETURN_IF_ERROR(file->allocate(0, capacity));
  auto base = file->map(capacity);
  if (!base.ok()) return base.status();
  std::memcpy(*base, header.data(), header.size());
  CL_RETURN_IF_ERROR(file->sync_mapped(0, format::kFirstEntryOffset));
  return std::unique_ptr<SegmentStorage>(new MappedStorage(std::move(file), *base));
}

Result<std::unique_ptr<SegmentStorage>> make_compressed_storage(std::unique_ptr<File> file,
                                                                PooledBuffer buffer,
                                                                uint64_t segment_id,
                                                                uint64_t buffer_capacity,
                                                                std::span<const std::byte> header) {
  CL_RETURN_IF_ERROR(file->write_at(0, header));
  CL_RETURN_IF_ERROR(file->sync());
  std::memcpy(buffer.data(), header.data(), header.size());
  return std::unique_ptr<SegmentStorage>(
      new CompressedStorage(std::move(file), std::move(buffer), segment_id, buffer_capacity));
}

}  // namespace commitlog
