// SPDX-License-Identifier: Apache-2.0
#include "segment/storage/segment_storage.h"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <mutex>
#include <optional>

#include "segment/checksum.h"
#include "segment/codec.h"
#include "segment/compression.h"
#include "segment/crypto/cipher.h"
#include "segment/segment_key.h"
#include "segment/format.h"

namespace commitlog {
namespace {

class MappedStorage final : public SegmentStorage {
 public:
  explicit MappedStorage(std::unique_ptr<File> file, std::byte* mapping) : file_(std::move(file)) {
    image_ = mapping;
  }
  Result<StagedWrite> stage(uint64_t offset, uint64_t length, bool) override {
    StagedWrite staged;
    staged.image_offset = offset;
    staged.image_bytes = staged.file_bytes = length;
    return staged;
  }
  Status commit(const StagedWrite& write) const override {
    return file_->sync_mapped(write.image_offset, write.image_bytes);
  }
  void prepare(uint64_t offset, uint64_t length) override { file_->prefault_mapped(offset, length); }
  // One pwrite instead of a copy through the mapping: no write fault per
  // page. A failed pwrite loses nothing, so its error is dropped here: the
  // caller then copies through the mapping, and msync reports what the disk
  // does with either.
  bool write_direct(uint64_t offset, std::span<const std::byte> payload, bool) override {
    if (payload.data() == image_ + offset) return false;  // sealed in place: already in the mapping
    return file_->write_at(offset, payload).ok();
  }

 private:
  std::unique_ptr<File> file_;
};

class CompressedStorage final : public SegmentStorage {
 public:
  CompressedStorage(std::unique_ptr<File> file, PooledBuffer buffer, uint64_t segment_id,
                    uint64_t capacity, SectionOptions options, std::optional<crypto::Key> data_key)
      : file_(std::move(file)),
        buffer_(std::move(buffer)),
        segment_id_(segment_id),
        capacity_(capacity),
        flush_groups_(options.flush_groups),
        lz4_(options.lz4),
        file_offset_(data_key ? format::kHeaderSize + format::kKeyBlockSize : format::kHeaderSize),
        allocated_(file_offset_) {
    image_ = buffer_.data();
    if (data_key) gcm_ = std::make_unique<crypto::Gcm>(*data_key);
  }

  // The producer pays for LZ4 on its own thread, so large payloads are
  // compressed in parallel rather than one after another on the sync thread,
  // and are never copied into the pooled image.
  bool write_direct(uint64_t offset, std::span<const std::byte> payload, bool) override {
    if (!flush_groups_) return false;
    Direct d;
    d.image_offset = offset;
    d.image_length = static_cast<uint32_t>(payload.size());
    d.section.reset(new std::byte[format::kSectionHeaderSize + lz4_bound(payload.size()) + format::kSectionTagSize +
                                  format::kAlignment]);
    std::byte* stored = d.section.get() + format::kSectionHeaderSize;
    if (auto n = lz4_ ? lz4_compress(payload, {stored, lz4_bound(payload.size())}) : std::nullopt) {
      d.stored_length = static_cast<uint32_t>(*n);
    } else {
      d.flags = format::kSectionRaw;
      d.stored_length = d.image_length;
      std::memcpy(stored, payload.data(), payload.size());
    }
    // Sealed in stage(), where the section's place in the file is known.
    if (!gcm_) d.stored_checksum = checksum({stored, d.stored_length});
    std::lock_guard lock(direct_mu_);
    direct_.push_back(std::move(d));
    return true;
  }

  // One flush is one group of sections in image order: the ranges between
  // direct payloads, compressed here, and the direct payloads' own sections.
  // All are written here; commit()'s one fdatasync makes the group durable.
  Result<StagedWrite> stage(uint64_t offset, uint64_t length, bool hold_headers) override {
    const uint64_t end = offset + length;
    take_direct(end);
    const uint64_t group_start = file_offset_;
    hold_headers_ = hold_headers;
    const size_t pieces = 2 * flushing_.size() + 1;
    size_t piece = 0;
    uint64_t at = offset;
    Status status;
    auto group_flags = [&] {
      const uint32_t flags = (piece > 0 ? format::kSectionJoined : 0) |
                             (piece + 1 < pieces ? format::kSectionMore : 0);
      ++piece;
      return flags;
    };
    for (Direct& d : flushing_) {
      if (status.ok()) status = store_range(at, d.image_offset - at, group_flags());
      if (status.ok()) status = store_direct(d, group_flags());
      at = d.image_offset + d.image_length;
    }
    if (status.ok()) status = store_range(at, end - at, group_flags());
    StagedWrite staged;
    staged.held = std::move(held_);
    held_.clear();
    if (!status.ok()) {
      // The retry covers at least this range again and rewrites it here.
      file_offset_ = group_start;
      return status;
    }
    staged.image_offset = offset;
    staged.image_bytes = length;
    staged.file_bytes = file_offset_ - group_start;
    flushing_.clear();
    return staged;
  }

  Status commit(const StagedWrite& write) const override {
    for (const StagedWrite::HeldHeader& h : write.held) {
      CL_RETURN_IF_ERROR(file_->write_at(h.file_offset, h.bytes));
    }
    return file_->sync();
  }

 private:
  // A payload compressed by its producer: its whole section, header room
  // first, zero padding after the stored bytes.
  struct Direct {
    uint64_t image_offset = 0;
    uint32_t image_length = 0;
    uint32_t stored_length = 0;
    uint32_t flags = 0;
    uint64_t stored_checksum = 0;
    std::unique_ptr<std::byte[]> section;
  };

  // Moves the direct payloads below `end` (those of sealed entries) to
  // flushing_, in image order. A failed flush keeps them there for its retry.
  void take_direct(uint64_t end) {
    std::lock_guard lock(direct_mu_);
    auto below = std::partition(direct_.begin(), direct_.end(),
                                [&](const Direct& d) { return d.image_offset >= end; });
    std::move(below, direct_.end(), std::back_inserter(flushing_));
    direct_.erase(below, direct_.end());
    std::sort(flushing_.begin(), flushing_.end(),
              [](const Direct& a, const Direct& b) { return a.image_offset < b.image_offset; });
  }

  // Compresses image bytes [offset, offset + length) into a section; one
  // that does not shrink, or any without LZ4, is stored raw, flagged.
  Status store_range(uint64_t offset, uint64_t length, uint32_t group_flags) {
    std::span<const std::byte> input{image_ + offset, length};
    scratch_.resize(format::kSectionHeaderSize + std::max<uint64_t>(lz4_bound(length), length) +
                    format::kSectionTagSize + format::kAlignment);
    std::byte* stored = scratch_.data() + format::kSectionHeaderSize;
    uint32_t flags = group_flags;
    size_t stored_length = 0;
    if (auto n = lz4_ ? lz4_compress(input, {stored, lz4_bound(length)}) : std::nullopt) {
      stored_length = *n;
    } else {
      flags |= format::kSectionRaw;
      stored_length = length;
      std::memcpy(stored, input.data(), length);
    }
    return append_section(scratch_.data(), offset, static_cast<uint32_t>(length),
                          static_cast<uint32_t>(stored_length), flags, std::nullopt);
  }

  // An encrypted section is sealed into scratch_: the producer's plain bytes
  // stay as they are for a retry, which seals them again under a new nonce.
  Status store_direct(const Direct& d, uint32_t group_flags) {
    if (!gcm_) {
      return append_section(d.section.get(), d.image_offset, d.image_length, d.stored_length,
                            d.flags | group_flags, d.stored_checksum);
    }
    scratch_.resize(format::kSectionHeaderSize + d.stored_length + format::kSectionTagSize + format::kAlignment);
    std::memcpy(scratch_.data() + format::kSectionHeaderSize, d.section.get() + format::kSectionHeaderSize,
                d.stored_length);
    return append_section(scratch_.data(), d.image_offset, d.image_length, d.stored_length, d.flags | group_flags,
                          std::nullopt);
  }

  // Encrypts the `stored_length` bytes after the header room of `section`
  // in place and appends the tag. Each call takes the next counter, so no
  // nonce repeats under the segment's key, not even when a failed stage()
  // writes other bytes at the same place again.
  Status seal(std::byte* section, uint64_t image_offset, uint32_t image_length, uint32_t& stored_length,
              uint32_t flags, uint32_t& counter) {
    if (next_counter_ == UINT32_MAX) return Status::invalid_argument("encrypted segment ran out of section nonces");
    counter = next_counter_++;
    stored_length += format::kSectionTagSize;
    encode_section_header(section, {image_offset, image_length, stored_length, flags, 0, counter}, segment_id_,
                          file_offset_);
    std::byte* stored = section + format::kSectionHeaderSize;
    const uint32_t plain = stored_length - format::kSectionTagSize;
    if (!gcm_->seal(section_nonce(segment_id_, counter), section_aad(section, segment_id_, file_offset_),
                    {stored, plain}, stored + plain)) {
      return Status::io_error("AES-256-GCM failed in libcrypto");
    }
    return {};
  }

  // Fills in the header of `section` (header room, stored bytes, room for
  // the tag and 8 bytes of padding after them), sealing it when the segment
  // is encrypted, and writes it at the file's end. `stored_checksum`: when
  // the producer computed it already.
  Status append_section(std::byte* section, uint64_t image_offset, uint32_t image_length,
                        uint32_t stored_length, uint32_t flags, std::optional<uint64_t> stored_checksum) {
    uint32_t counter = 0;
    if (gcm_) CL_RETURN_IF_ERROR(seal(section, image_offset, image_length, stored_length, flags, counter));
    std::byte* stored = section + format::kSectionHeaderSize;
    std::memset(stored + stored_length, 0, format::kAlignment);
    const uint64_t sum = stored_checksum ? *stored_checksum : checksum({stored, stored_length});
    const size_t total = format::align_up(format::kSectionHeaderSize + stored_length);
    encode_section_header(section, {image_offset, image_length, stored_length, flags, sum, counter}, segment_id_,
                          file_offset_);
    if (file_offset_ + total > allocated_) {
      // Space is reserved ahead in steps: a write that also grows the file
      // makes every fdatasync commit a metadata change, a journal write each.
      const uint64_t step = std::max<uint64_t>(std::min(format::kCompressedAllocationStep, capacity_), total);
      if (Status grown = file_->allocate(allocated_, step); !grown.ok()) {
        // A growth that fails may have extended the file part of the way
        // (ext4's fallocate on a full disk; a short write of a step's zeros
        // in whole blocks): it goes back to its old size, which the sections
        // explain to a reader. Should that fail too, the reader still takes
        // the partial step for what it is (segment_image.cc).
        file_->truncate(allocated_).ignore();
        return grown;
      }
      allocated_ += step;
    }
    if (hold_headers_) {
      // Zeros, not the old bytes: a failed stage's retry may rewrite here.
      StagedWrite::HeldHeader& held = held_.emplace_back();
      held.file_offset = file_offset_;
      std::memcpy(held.bytes.data(), section, format::kSectionHeaderSize);
      std::memset(section, 0, format::kSectionHeaderSize);
    }
    CL_RETURN_IF_ERROR(file_->write_at(file_offset_, {section, total}));
    file_offset_ += total;
    return {};
  }

  std::unique_ptr<File> file_;
  PooledBuffer buffer_;
  const uint64_t segment_id_;
  const uint64_t capacity_;
  const bool flush_groups_;
  const bool lz4_;
  uint64_t file_offset_;
  uint64_t allocated_;
  std::unique_ptr<crypto::Gcm> gcm_;  // encrypted segments: the data key's
  uint32_t next_counter_ = 0;         // the next section's write counter
  std::vector<std::byte> scratch_;
  std::vector<Direct> flushing_;               // sync thread only
  bool hold_headers_ = false;                  // during stage()
  std::vector<StagedWrite::HeldHeader> held_;  // during stage()
  std::mutex direct_mu_;
  std::vector<Direct> direct_;  // guarded by direct_mu_
};

}  // namespace

bool SegmentStorage::write_direct_filled(uint64_t offset, uint64_t length, bool caller_blocks_thread,
                                         const std::function<bool(uint64_t end)>& fill) {
  return fill(offset + length) && write_direct(offset, {image_ + offset, length}, caller_blocks_thread);
}

Result<std::unique_ptr<SegmentStorage>> make_mapped_storage(std::unique_ptr<File> file,
                                                            uint64_t capacity,
                                                            std::span<const std::byte> header) {
  // A plain fallocate, not zero-filling writes: on ext4 a zero-filled file can
  // sit in the page cache as large folios, and msync of one dirty 4 KiB page
  // then writes the whole folio. See FORMAT.md.
  // The header goes in with one pwrite, not a copy through the mapping: a
  // process killed in the middle of a copy leaves a torn header in the page
  // cache, which the next replay must take for damage, while a write(2)
  // inside one page is whole or absent to a process crash.
  CL_RETURN_IF_ERROR(file->allocate(0, capacity));
  CL_RETURN_IF_ERROR(file->write_at(0, header));
  auto base = file->map(capacity);
  if (!base.ok()) return base.status();
  CL_RETURN_IF_ERROR(file->sync_mapped(0, header.size() + format::kMarkerSize));
  return std::unique_ptr<SegmentStorage>(new MappedStorage(std::move(file), *base));
}

Result<std::unique_ptr<SegmentStorage>> make_compressed_storage(
    std::unique_ptr<File> file, PooledBuffer buffer, uint64_t segment_id, uint64_t buffer_capacity,
    SectionOptions options, std::span<const std::byte> header) {
  std::vector<std::byte> start(header.begin(), header.end());
  std::optional<crypto::Key> data_key;
  if (options.keys != nullptr) {
    auto key = crypto::new_segment_key(*options.keys, segment_id);
    if (!key.ok()) return key.status();
    data_key = key->data_key;
    start.insert(start.end(), key->block.begin(), key->block.end());
  }
  CL_RETURN_IF_ERROR(file->write_at(0, start));
  CL_RETURN_IF_ERROR(file->sync());
  std::memcpy(buffer.data(), header.data(), header.size());
  return std::unique_ptr<SegmentStorage>(new CompressedStorage(std::move(file), std::move(buffer), segment_id,
                                                               buffer_capacity, options, std::move(data_key)));
}

}  // namespace commitlog
