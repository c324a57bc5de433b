// SPDX-License-Identifier: Apache-2.0
#include "segment/storage/mapped_segment.h"

#include <algorithm>
#include <cassert>
#include <cstring>

#include "segment/storage/block_file.h"
#include "segment/checksum.h"
#include "segment/codec.h"
#include "segment/segment_key.h"
#include "segment/file_name.h"
#include "segment/format.h"

namespace commitlog {
namespace {

constexpr uint64_t kClosedBit = uint64_t{1} << 63;

std::atomic_ref<uint32_t> length_field(std::byte* entry) {
  return std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(entry));
}

Result<std::unique_ptr<File>> open_direct(FileSystem& fs, const std::string& path, uint64_t block_size) {
  auto file = fs.open(path, OpenMode::kReadWriteDirect);
  if (!file.ok()) return file.status();
  return make_block_file(std::move(file).value(), block_size);
}

// `created`: the file at `path`, new and empty unless `origin` says it is a spare.
Result<std::unique_ptr<SegmentStorage>> make_storage(FileSystem& fs, const std::string& path,
                                                     std::unique_ptr<File> created,
                                                     std::optional<PooledBuffer> buffer,
                                                     const SegmentFileInfo& info, StorageMode mode,
                                                     std::span<const std::byte> header,
                                                     SegmentFileOrigin origin) {
  if ((info.flags & format::kFlagLz4Sections) != 0) {
    auto file = mode.io == SegmentIo::kDirect ? open_direct(fs, path, mode.block_size)
                                              : Result<std::unique_ptr<File>>(std::move(created));
    if (!file.ok()) return file.status();
    const SectionOptions options{.flush_groups = (info.flags & format::kFlagFlushGroups) != 0,
                                 .lz4 = info.lz4,
                                 .keys = (info.flags & format::kFlagEncrypted) != 0 ? info.keys : nullptr};
    return make_compressed_storage(std::move(file).value(), std::move(*buffer), info.id, info.capacity, options,
                                   header);
  }
  switch (mode.io) {
    case SegmentIo::kMapped: return make_mapped_storage(std::move(created), info.capacity, header);
    case SegmentIo::kStandard:
      return make_standard_storage(std::move(created), std::move(*buffer), info.capacity, header, origin);
    case SegmentIo::kDirect:
      created.reset();  // reopened for direct I/O
      return make_direct_storage(fs, path, std::move(*buffer), info.capacity, mode.block_size, header, origin);
  }
  return Status::invalid_argument("unknown segment I/O");
}

}  // namespace

Result<std::unique_ptr<MappedSegment>> MappedSegment::create(FileSystem& fs, const Clock& clock,
                                                             const std::string& dir,
                                                             SegmentFileInfo info,
                                                             BufferPool* pool, StorageMode mode,
                                                             const std::optional<std::string>& spare) {
  if (info.capacity < format::first_entry_offset(info.flags) + format::kMarkerSize + format::kEntryHeaderSize ||
      info.capacity % format::kAlignment != 0) {
    return Status::invalid_argument("segment size " + std::to_string(info.capacity) +
                                    " is too small or not a multiple of 8");
  }
  if ((info.flags & format::kFlagSyncedMarks) != 0 &&
      info.capacity > format::kMaxSyncedMarksCapacity) {
    return Status::invalid_argument("segment size " + std::to_string(info.capacity) +
                                    " does not fit the 32-bit offsets of synced markers");
  }
  const bool compressed = (info.flags & format::kFlagLz4Sections) != 0;
  const bool pooled = compressed || mode.io != SegmentIo::kMapped;
  if (pooled && (pool == nullptr || pool->buffer_size() < info.capacity)) {
    return Status::invalid_argument("a segment not mapped needs a buffer pool of segment-sized buffers");
  }
  if (compressed && (mode.io == SegmentIo::kDirect) != ((info.flags & format::kFlagWholeBlocks) != 0)) {
    return Status::invalid_argument("a compressed segment has kFlagWholeBlocks exactly when written with direct I/O");
  }
  const bool sealed = format::seals_entries(info.flags);
  if ((info.flags & format::kFlagEncrypted) != 0 && (compressed == sealed || info.keys == nullptr)) {
    return Status::invalid_argument("an encrypted segment is written in sections or sealed entries, with master keys");
  }
  // The header, and with sealed entries the key block after it.
  std::byte start[format::kHeaderSize + format::kKeyBlockSize];
  encode_segment_header({format::kFormatVersion, info.flags, info.id, clock.wall_micros(), info.capacity, info.previous_id},
                        std::span<std::byte, format::kHeaderSize>(start, format::kHeaderSize));
  std::unique_ptr<crypto::SharedSealer> sealer;
  if (sealed) {
    auto key = crypto::new_segment_key(*info.keys, info.id);
    if (!key.ok()) return key.status();
    std::memcpy(start + format::kKeyBlockOffset, key->block.data(), key->block.size());
    sealer = std::make_unique<crypto::SharedSealer>(key->data_key);
  }
  const std::span<const std::byte> header{start, format::first_marker_offset(info.flags)};

  // Taken before the file is created: waiting for a buffer is the pool's back-pressure.
  std::optional<PooledBuffer> buffer = pooled ? pool->acquire() : std::nullopt;
  if (pooled && !buffer) return Status::closed("the segment buffer pool is shut: the log has stopped");
  if (spare && (compressed || mode.io == SegmentIo::kMapped)) {
    return Status::invalid_argument("only a plain segment written through a pooled image reuses a spare file");
  }
  std::string path = dir + "/" + segment_file_name(info.id);
  if (spare) {
    // The header goes in under the spare's name, so a crash leaves either a
    // spare or a segment with no data yet, never a segment named for one id
    // whose header names another.
    auto file = fs.open(*spare, OpenMode::kReadWrite);
    if (!file.ok()) return file.status();
    auto storage = make_storage(fs, *spare, std::move(file).value(), std::move(buffer), info, mode, header,
                                SegmentFileOrigin::kSpare);
    if (!storage.ok()) return storage.status();
    CL_RETURN_IF_ERROR(fs.rename(*spare, path));
    if (Status synced = fs.sync_dir(dir); !synced.ok()) {
      fs.remove(path).ignore();
      return synced;
    }
    return std::unique_ptr<MappedSegment>(
        new MappedSegment(std::move(storage).value(), clock, std::move(path), info, std::move(sealer)));
  }
  auto file = fs.open(path, OpenMode::kCreateNew, info.permissions);
  if (!file.ok()) return file.status();
  auto storage = make_storage(fs, path, std::move(file).value(), std::move(buffer), info, mode, header,
                              SegmentFileOrigin::kNew);
  // The new name must be durable before anything in it is acknowledged.
  Status made = storage.ok() ? fs.sync_dir(dir) : storage.status();
  if (!made.ok()) {
    // Nothing in it was ever acknowledged: a failed creation (a full disk,
    // say) leaves no file behind.
    fs.remove(path).ignore();
    return made;
  }
  return std::unique_ptr<MappedSegment>(
      new MappedSegment(std::move(storage).value(), clock, std::move(path), info, std::move(sealer)));
}

MappedSegment::MappedSegment(std::unique_ptr<SegmentStorage> storage, const Clock& clock,
                             std::string path, SegmentFileInfo info,
                             std::unique_ptr<crypto::SharedSealer> sealer)
    : storage_(std::move(storage)),
      sealer_(std::move(sealer)),
      path_(std::move(path)),
      info_(info),
      base_(storage_->image()),
      alloc_(format::first_entry_offset(info.flags)),
      open_marker_(format::first_marker_offset(info.flags)),
      entries_(base_, format::first_entry_offset(info.flags), clock),
      flush_from_(format::first_marker_offset(info.flags)),
      synced_(format::first_marker_offset(info.flags)),
      ahead_(info.capacity) {
  const PrepareAhead::Range first = ahead_.first();
  storage_->prepare(first.first, first.second - first.first);  // on the allocator thread (create())
}

MappedSegment::~MappedSegment() = default;

std::optional<uint64_t> MappedSegment::reserve(uint64_t bytes) {
  const uint64_t limit = info_.capacity - format::kMarkerSize;  // room for the end marker
  uint64_t cur = alloc_.load(std::memory_order_relaxed);
  do {
    if ((cur & kClosedBit) != 0 || cur + bytes > limit) return std::nullopt;
  } while (!alloc_.compare_exchange_weak(cur, cur + bytes, std::memory_order_acq_rel,
                                         std::memory_order_relaxed));
  return cur;
}

uint64_t MappedSegment::max_reservation() const {
  return info_.capacity - format::kMarkerSize - format::first_entry_offset(info_.flags);
}

bool MappedSegment::has_unsealed() const {
  if (end_marker_written_) return false;
  const uint64_t cur = alloc_.load(std::memory_order_acquire);
  return (cur & kClosedBit) != 0 || cur != open_marker_ + format::kMarkerSize;
}

bool MappedSegment::has_unflushed() const {
  return has_unsealed() || dirty_;
}

void MappedSegment::prepare_ahead() {
  if (closed()) return;  // a segment is released only once finished, so closed
  if (const auto range = ahead_.next(used())) storage_->prepare(range->first, range->second - range->first);
}

uint64_t MappedSegment::used() const { return alloc_.load(std::memory_order_relaxed) & ~kClosedBit; }

Result<bool> MappedSegment::write_entry(uint64_t offset, uint32_t table, uint64_t time_us,
                                        std::span<const std::byte> payload, bool direct, bool caller_blocks_thread) {
  std::byte* entry = base_ + offset;
  std::byte* stored = entry + format::kEntryHeaderSize;
  const uint64_t stored_size = format::stored_payload_size(payload.size(), info_.flags);
  const auto length = static_cast<uint32_t>(format::kEntryHeaderSize + stored_size);
  bool went_direct = false;
  Status sealed;
  if (sealer_) {
    // Encrypted straight into the image, which then holds what a direct
    // write takes, piece by piece as the sealing goes. If libcrypto fails,
    // the entry is still published, as zeros that never open (no plaintext
    // reaches the file), and the caller fails the log.
    Result<bool> sealed_direct = seal_entry(offset, length, table, time_us, payload, direct, caller_blocks_thread);
    if (sealed_direct.ok()) {
      went_direct = *sealed_direct;
    } else {
      std::memset(stored, 0, stored_size);
      sealed = sealed_direct.status();
    }
  } else {
    went_direct = direct && !payload.empty() &&
                  storage_->write_direct(offset + format::kEntryHeaderSize, payload, caller_blocks_thread);
    if (!went_direct && !payload.empty()) std::memcpy(stored, payload.data(), payload.size());
  }
  std::byte header[format::kEntryHeaderSize];
  const std::span<const std::byte> bytes = sealer_ ? std::span<const std::byte>(stored, stored_size) : payload;
  encode_entry_header(header, {length, table, time_us, checksum(bytes)}, info_.id, offset);
  std::memcpy(entry + 4, header + 4, format::kEntryHeaderSize - 4);
  // The length goes last: the sync thread reads a non-zero length as "this
  // entry is complete" (see wait_for_published).
  length_field(entry).store(length, std::memory_order_release);
  if (!sealed.ok()) return sealed;
  return went_direct;
}

Result<bool> MappedSegment::seal_entry(uint64_t offset, uint32_t length, uint32_t table, uint64_t time_us,
                                       std::span<const std::byte> payload, bool direct, bool caller_blocks_thread) {
  const uint64_t stored_at = offset + format::kEntryHeaderSize;
  std::byte* stored = base_ + stored_at;
  bool ok = sealer_->start(entry_nonce(info_.id, offset), entry_aad(length, table, time_us, info_.id, offset));
  size_t sealed = 0;  // payload bytes encrypted so far
  bool tagged = false;
  auto fill = [&](uint64_t end) {
    const uint64_t upto = std::min<uint64_t>(end - stored_at, payload.size());
    if (ok && upto > sealed) {
      ok = sealer_->next(payload.subspan(sealed, upto - sealed), stored + sealed);
      sealed = upto;
    }
    if (ok && !tagged && end - stored_at > payload.size()) {
      ok = sealer_->finish(stored + payload.size());
      tagged = true;
    }
    return ok;
  };
  const uint64_t stored_size = length - format::kEntryHeaderSize;
  const bool went_direct = direct && storage_->write_direct_filled(stored_at, stored_size, caller_blocks_thread, fill);
  if (!direct) (void)fill(stored_at + stored_size);
  if (!ok) {
    return Status::io_error("AES-256-GCM failed in libcrypto for an entry of segment " + std::to_string(info_.id));
  }
  return went_direct;
}

uint64_t MappedSegment::close() {
  return alloc_.fetch_or(kClosedBit, std::memory_order_acq_rel) & ~kClosedBit;
}

bool MappedSegment::closed() const {
  return (alloc_.load(std::memory_order_acquire) & kClosedBit) != 0;
}

void MappedSegment::write_marker(uint64_t at, uint64_t next) {
  // synced_ is what the last completed flush covered, never the flush this
  // seal may be for: a power loss before that one ends may tear anything
  // above synced_, and the reader must then take such damage for a torn tail.
  std::byte marker[format::kMarkerSize];
  encode_marker(marker, {next, synced_}, info_.id, at, info_.flags);
  std::memcpy(base_ + at, marker, sizeof marker);
}

uint64_t MappedSegment::seal() {
  if (end_marker_written_) return open_marker_ + format::kMarkerSize;
  const uint64_t limit = info_.capacity - format::kMarkerSize;
  uint64_t cur = alloc_.load(std::memory_order_acquire);
  while ((cur & kClosedBit) == 0) {
    if (cur == open_marker_ + format::kMarkerSize) return cur;  // nothing new
    if (cur + format::kMarkerSize > limit) {
      cur = close() | kClosedBit;
      break;
    }
    if (alloc_.compare_exchange_weak(cur, cur + format::kMarkerSize, std::memory_order_acq_rel,
                                     std::memory_order_acquire)) {
      entries_.wait_until(open_marker_ + format::kMarkerSize, cur);
      std::memset(base_ + cur, 0, format::kMarkerSize);
      write_marker(open_marker_, cur);
      open_marker_ = cur;
      dirty_ = true;
      entries_.skip_to(cur + format::kMarkerSize);
      return entries_.published();
    }
  }
  const uint64_t end = cur & ~kClosedBit;
  entries_.wait_until(open_marker_ + format::kMarkerSize, end);
  write_marker(open_marker_, end);
  write_marker(end, format::kEndOfSegment);
  end_marker_written_ = true;
  open_marker_ = end;
  dirty_ = true;
  return end + format::kMarkerSize;
}

Result<MappedSegment::Staged> MappedSegment::stage(bool hold_headers) {
  Staged staged;
  staged.tail = open_marker_ + format::kMarkerSize;
  if (!dirty_) return staged;
  auto write = storage_->stage(flush_from_, staged.tail - flush_from_, hold_headers);
  if (!write.ok()) return write.status();
  staged.write = std::move(write).value();
  staged.last = end_marker_written_;
  // The next seal rewrites the open marker, so the next stage starts there.
  flush_from_ = open_marker_;
  dirty_ = false;
  return staged;
}

Status MappedSegment::commit(const Staged& staged) const {
  return staged.write.empty() ? Status{} : storage_->commit(staged.write);
}

void MappedSegment::committed(const Staged& staged) {
  if (staged.write.empty()) return;
  storage_->count_committed(staged.write);
  // Everything below the open marker at the stage is final; the marker slot
  // itself is rewritten by the next seal, so it is not counted as synced.
  synced_ = std::max(synced_, staged.tail - format::kMarkerSize);
  if (staged.last) finished_ = true;
}

}  // namespace commitlog

namespace commitlog {
void MappedSegment::release_file() {
  assert(finished_);
  image_bytes_persisted_ = storage_->image_bytes_persisted();
  file_bytes_written_ = storage_->file_bytes_written();
  storage_.reset();
}
}  // namespace commitlog
