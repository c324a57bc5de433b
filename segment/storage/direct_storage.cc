// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "segment/storage/pooled_image_storage.h"

namespace commitlog {
namespace {

constexpr uint64_t kPrewriteChunk = 1 << 20;

// The file holds the image rounded up to whole blocks.
//
// A flush ending inside a block writes that block, and the next flush
// rewrites it with more entries. Its head, already durable, is rewritten
// with the same bytes, so a torn rewrite leaves each of those sectors as it
// was; only the bytes after the last flush's tail can be torn, and the reader
// takes them for the torn tail they are.
//
// commit() is one fdatasync after the flush's writes, as in the standard
// storage: on a device without FUA a RWF_DSYNC write costs the same write and
// cache flush, and keeping the two apart keeps every storage on the one
// stage/commit protocol. A large payload's producer writes the whole blocks
// inside it, so the device gets one request per producer at once rather
// than one flush's in turn; the blocks it shares with its neighbours go with
// the flush.
class DirectStorage final : public PooledImageStorage {
 public:
  DirectStorage(std::unique_ptr<File> file, PooledBuffer buffer, uint64_t block_size)
      : PooledImageStorage(std::move(file), std::move(buffer)),
        block_(block_size),
        last_block_(static_cast<std::byte*>(std::aligned_alloc(block_size, block_size))) {}

  // The whole blocks go from the image, but for those producers wrote; the
  // block the range ends inside goes from a copy, zero after the range:
  // producers may be writing the image past it, and a device or file system
  // that checksums what it is given (stable pages) must not be handed bytes
  // that change while they are written. The last whole blocks and that copy
  // go in one write: a flush of small entries costs the device one request.
  Result<StagedWrite> stage(uint64_t offset, uint64_t length, bool) override {
    const uint64_t end = offset + length;
    const uint64_t from = offset / block_ * block_;
    const uint64_t whole_end = std::max(from, end / block_ * block_);
    std::vector<Range> ranges = ranges_to_write(from, whole_end);
    if (ranges.empty() || ranges.back().second != whole_end) ranges.push_back({whole_end, whole_end});
    if (end > whole_end) {
      std::memcpy(last_block_.get(), image_ + whole_end, end - whole_end);
      std::memset(last_block_.get() + (end - whole_end), 0, block_ - (end - whole_end));
    }
    for (size_t i = 0; i < ranges.size(); ++i) {
      const auto [at, to] = ranges[i];
      std::span<const std::byte> pieces[2];
      size_t count = 0;
      if (to > at) pieces[count++] = {image_ + at, to - at};
      if (i + 1 == ranges.size() && end > whole_end) pieces[count++] = {last_block_.get(), block_};
      if (count > 0) CL_RETURN_IF_ERROR(file_->write_gathered_at(at, {pieces, count}));
    }
    forget_written_below(whole_end);
    return staged(offset, length, whole_end - from + (end > whole_end ? block_ : 0));
  }

 private:
  Range producer_range(uint64_t from, uint64_t to) const override {
    return {(from + block_ - 1) / block_ * block_, to / block_ * block_};
  }
  bool waits_for_device() const override { return true; }

  const uint64_t block_;
  AlignedBytes last_block_;
};

}  // namespace

Result<std::unique_ptr<SegmentStorage>> make_direct_storage(FileSystem& fs, const std::string& path,
                                                            PooledBuffer buffer, uint64_t capacity,
                                                            uint64_t block_size,
                                                            std::span<const std::byte> header,
                                                            SegmentFileOrigin origin) {
  auto file = fs.open(path, OpenMode::kReadWriteDirect);
  if (!file.ok()) return file.status();
  const uint64_t size = direct_file_size(capacity, block_size);
  if (origin == SegmentFileOrigin::kSpare) {
    CL_RETURN_IF_ERROR(check_spare_size(**file, size));
  } else {
    // Written past the page cache, so the size of the writes makes no folios.
    // The zeros first, header bytes included, made durable, and only then the
    // header's block (see segment_storage.h): a crash in between leaves zeros.
    for (uint64_t at = 0; at < size; at += kPrewriteChunk) {
      const uint64_t n = std::min(kPrewriteChunk, size - at);
      CL_RETURN_IF_ERROR((*file)->write_at(at, {buffer.data() + at, n}));
    }
    CL_RETURN_IF_ERROR((*file)->sync());
  }
  std::memcpy(buffer.data(), header.data(), header.size());
  CL_RETURN_IF_ERROR((*file)->write_at(0, {buffer.data(), block_size}));
  CL_RETURN_IF_ERROR((*file)->sync());
  return std::unique_ptr<SegmentStorage>(new DirectStorage(std::move(file).value(), std::move(buffer), block_size));
}

}  // namespace commitlog
