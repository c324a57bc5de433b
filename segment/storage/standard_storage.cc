// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <cstring>

#include "segment/storage/pooled_image_storage.h"

namespace commitlog {
namespace {

constexpr uint64_t kPrewritePage = 4096;

class StandardStorage final : public PooledImageStorage {
 public:
  StandardStorage(std::unique_ptr<File> file, PooledBuffer buffer)
      : PooledImageStorage(std::move(file), std::move(buffer)) {}

  Result<StagedWrite> stage(uint64_t offset, uint64_t length, bool) override {
    for (const auto& [from, to] : ranges_to_write(offset, offset + length)) {
      CL_RETURN_IF_ERROR(file_->write_at(from, {image_ + from, to - from}));
    }
    forget_written_below(offset + length);
    return staged(offset, length, length);
  }

 private:
  // A pwrite into the page cache: the producer's copy, made on its own
  // thread, in parallel with the others'.
  Range producer_range(uint64_t from, uint64_t to) const override { return {from, to}; }
  bool waits_for_device() const override { return false; }
};

}  // namespace

Result<std::unique_ptr<SegmentStorage>> make_standard_storage(std::unique_ptr<File> file, PooledBuffer buffer,
                                                              uint64_t capacity,
                                                              std::span<const std::byte> header,
                                                              SegmentFileOrigin origin) {
  if (origin == SegmentFileOrigin::kSpare) {
    CL_RETURN_IF_ERROR(check_spare_size(*file, capacity));
  } else {
    // The zeros first, header bytes included, made durable, and only then the
    // header (see segment_storage.h): a crash in between leaves zeros.
    for (uint64_t at = 0; at < capacity; at += kPrewritePage) {
      const uint64_t n = std::min(kPrewritePage, capacity - at);
      CL_RETURN_IF_ERROR(file->write_at(at, {buffer.data() + at, n}));
    }
    CL_RETURN_IF_ERROR(file->sync());
  }
  // With the first marker slot: a spare's old bytes there must read as the
  // zero marker of a segment with no data yet. `header` is all that comes
  // before that slot (the key block of sealed entries too).
  std::memcpy(buffer.data(), header.data(), header.size());
  CL_RETURN_IF_ERROR(file->write_at(0, {buffer.data(), header.size() + format::kMarkerSize}));
  CL_RETURN_IF_ERROR(file->sync());
  return std::unique_ptr<SegmentStorage>(new StandardStorage(std::move(file), std::move(buffer)));
}

}  // namespace commitlog
