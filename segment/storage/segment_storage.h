// SPDX-License-Identifier: Apache-2.0
// Where a segment's image lives while it is written, and how a range of it
// becomes durable (commitlog_disk_access_mode). Every storage implements the
// one protocol the segment writer (mapped_segment.h) drives:
//
//   producers:   write_direct()   (optional; a large payload bypassing the image)
//   the round:   stage(range)     the range's bytes on their way to the file
//   any thread:  commit(staged)   durable
//   the round:   count_committed(staged), after commit() succeeded
//
// The storages:
//  - mapped: the image is the mmapped file; stage() writes nothing (the
//    mapping is the file), commit() is msync of the range.
//  - standard: the image is a pooled buffer; stage() pwrites the range to the
//    file at the same offset, commit() fdatasyncs.
//  - direct: the image is a pooled buffer; stage() writes the whole blocks
//    holding the range with O_DIRECT, commit() makes them durable.
//  - compressed: the image is a pooled buffer; stage() compresses the range
//    with LZ4 and appends it to the file as one group of sections (format.h),
//    through a plain File (standard) or a BlockFile (direct,
//    segment/storage/block_file.h); commit() fdatasyncs.
// The segment writer works on the image only, so all of them share its
// reservation, publication and marker logic. A large payload may instead take
// the direct route (write_direct): its producer stores it in the file (or,
// compressed, as a section of the next flush) on its own thread, so that
// producers of large payloads write concurrently, and one flush's sync covers
// them all.
//
// Thread-safety: image() bytes are written by producers in disjoint
// reservations, and so is write_direct(); stage() and count_committed() are
// called by the round only, commit() by one thread at a time (see
// stage()), prepare() by the sync or allocator thread.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "segment/storage/buffer_pool.h"
#include "commitlog/file_system.h"
#include "commitlog/key_provider.h"
#include "segment/format.h"

namespace commitlog {

// What SegmentStorage::stage() wrote and commit() has yet to make durable.
struct StagedWrite {
  // A section header stage() wrote as zeros; commit() writes it.
  struct HeldHeader {
    uint64_t file_offset = 0;
    std::array<std::byte, format::kSectionHeaderSize> bytes{};
  };
  std::vector<HeldHeader> held;
  uint64_t image_offset = 0;
  uint64_t image_bytes = 0;  // 0: nothing was staged
  uint64_t file_bytes = 0;   // what they took in the file
  bool empty() const { return image_bytes == 0; }
};

class SegmentStorage {
 public:
  virtual ~SegmentStorage() = default;
  std::byte* image() const { return image_; }
  // Image bytes [offset, offset + length) become durable, with the payloads
  // written by write_direct() inside that range, in two steps, so that one
  // flush's fdatasync can run while the next flush is compressed
  // (commitlog/write/flush_pipeline.h).
  // stage() writes the range to the file, not durable yet; a failed stage()
  // leaves nothing a reader sees, and its retry rewrites the range. With
  // `hold_headers` the section headers are written as zeros and returned, so
  // a reader sees none of it until commit(): while an earlier flush is not
  // durable, a power loss could keep this one and tear that one, which reads
  // as corruption instead of a torn tail. Mapped: the mapping is the file, so
  // stage() writes nothing.
  virtual Result<StagedWrite> stage(uint64_t offset, uint64_t length, bool hold_headers) = 0;
  // Writes the held headers and makes everything staged up to `write` durable
  // (fdatasync; mapped: msync of its range). Touches only the file, so it may
  // run on another thread while the round stages the next flush.
  virtual Status commit(const StagedWrite& write) const = 0;
  // After a successful commit(), on the thread that calls stage().
  void count_committed(const StagedWrite& write) {
    image_bytes_ += write.image_bytes;
    file_bytes_ += write.file_bytes;
  }
  // Producers: stores `payload` as image bytes [offset, offset + size) on the
  // calling thread, or returns false, and the caller copies it into image().
  // Mapped: one pwrite into the file, whose page cache the mapping shares,
  // so msync covers it. Compressed: LZ4 on the calling thread, kept until
  // stage() stores it as its own section of the flush's group. Standard
  // and direct: copied into the image, and its range (direct: the whole
  // blocks inside it) written to the file from there, which stage() then
  // leaves out; only when `caller_blocks_thread` for direct, whose write
  // waits for the device (a fiber must not block its scheduler thread).
  // `payload` may be the image's own bytes at `offset` (an entry sealed in
  // place): nothing is copied then, and mapped has nothing left to do.
  // REQUIRES: called before the entry is published (its length stored).
  virtual bool write_direct(uint64_t offset, std::span<const std::byte> payload, bool caller_blocks_thread) = 0;
  // Producers: as write_direct(), for a payload made in the image as it is
  // stored (an entry sealed in place): `fill(end)` makes image bytes
  // [offset, end) final, called with rising `end` up to offset + length, or
  // until it returns false. On return it has been called up to there or has
  // failed; the result says whether this wrote the range, as write_direct()'s.
  // Standard and direct write its whole blocks piece by piece, each as soon
  // as it is filled, so the device writes one while the next is made (direct
  // I/O: whether or not a flush is running); the others fill it all, then
  // write_direct() it.
  virtual bool write_direct_filled(uint64_t offset, uint64_t length, bool caller_blocks_thread,
                                   const std::function<bool(uint64_t end)>& fill);
  // A hint, from the sync or allocator thread: producers are about to write
  // image bytes [offset, offset + length). Mapped: makes the pages wholly
  // inside it writable now (File::prefault_mapped), so that a producer takes no page
  // fault between reserving an entry and publishing it, which seal() would
  // wait for. Compressed: nothing, the image is anonymous memory.
  virtual void prepare(uint64_t /*offset*/, uint64_t /*length*/) {}
  // Bytes of the image committed and the bytes that took in the file.
  uint64_t image_bytes_persisted() const { return image_bytes_; }
  uint64_t file_bytes_written() const { return file_bytes_; }

 protected:
  std::byte* image_ = nullptr;
  uint64_t image_bytes_ = 0;
  uint64_t file_bytes_ = 0;
};

// How a segment's image reaches its file.
enum class SegmentIo { kMapped, kStandard, kDirect };
struct StorageMode {
  SegmentIo io = SegmentIo::kMapped;
  uint64_t block_size = 0;  // kDirect: FileSystem::direct_io_block_size()
};

// Preallocates and maps `file` (capacity bytes) and writes `header` into it, durably.
Result<std::unique_ptr<SegmentStorage>> make_mapped_storage(std::unique_ptr<File> file,
                                                            uint64_t capacity,
                                                            std::span<const std::byte> header);
// How a segment written in sections stores them (the header's flags).
struct SectionOptions {
  bool flush_groups = false;  // format::kFlagFlushGroups: enables write_direct()
  bool lz4 = true;            // format::kFlagLz4Sections alone stores every section raw
  // format::kFlagEncrypted: each segment gets a random data key, wrapped by
  // the provider's active key into the key block, and every section is
  // sealed with it (format.h). Must outlive the storage.
  const KeyProvider* keys = nullptr;
};
// Writes `header` (and with options.keys the key block) at the start of
// `file`, durably; the image is `buffer`.
Result<std::unique_ptr<SegmentStorage>> make_compressed_storage(
    std::unique_ptr<File> file, PooledBuffer buffer, uint64_t segment_id, uint64_t buffer_capacity,
    SectionOptions options, std::span<const std::byte> header);

// Where the file of a standard or direct segment comes from.
enum class SegmentFileOrigin {
  // Created empty: pre-written with zeros to its full size and synced
  // before the header is written, then synced again. So a plain segment is
  // never shorter than its header's capacity (FORMAT.md), and a crash while
  // a file is made leaves zeros, which replay takes for the unused leftover
  // they are. Flushes then overwrite written blocks: a fallocated file's
  // first writes convert extents, which every fdatasync would commit, at
  // the cost of a journal write per small flush. A spare spares the zeros.
  kNew,
  // A spare (commitlog/lifecycle/spare_segments.h): already its full size,
  // every block written; its old bytes stay, and the header and the first
  // marker slot are written over them and synced.
  kSpare,
};

// Makes `file` ready as `origin` says and writes `header`; the image is
// `buffer` (zeroed). Zeros are pre-written in 4 KiB pwrites, which keep the
// page cache from building large folios, each of which a small write would
// dirty and an fdatasync write back whole.
Result<std::unique_ptr<SegmentStorage>> make_standard_storage(std::unique_ptr<File> file, PooledBuffer buffer,
                                                              uint64_t capacity,
                                                              std::span<const std::byte> header,
                                                              SegmentFileOrigin origin);
// The size of a direct I/O segment file of `capacity` bytes: rounded up to
// `block_size`, a power of two.
constexpr uint64_t direct_file_size(uint64_t capacity, uint64_t block_size) {
  return (capacity + block_size - 1) & ~(block_size - 1);
}

// Opens `path` (an empty file, or a spare) for direct I/O; its size is
// direct_file_size(), pre-written or a spare as `origin` says; then the
// block holding `header` is written and synced; the image is `buffer`
// (zeroed). `block_size`: a power of two from 4096 to kBufferAlignment
// (FileSystem::direct_io_block_size()).
Result<std::unique_ptr<SegmentStorage>> make_direct_storage(FileSystem& fs, const std::string& path,
                                                            PooledBuffer buffer, uint64_t capacity,
                                                            uint64_t block_size,
                                                            std::span<const std::byte> header,
                                                            SegmentFileOrigin origin);

}  // namespace commitlog
