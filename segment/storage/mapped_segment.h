// SPDX-License-Identifier: Apache-2.0
// One segment file being written. Its image (format.h) is the mmapped file
// itself, or a pooled buffer whose changed ranges each flush writes to the
// file, as they are or as LZ4 sections (segment_storage.h); everything here
// works on the image alone.
//
// Producers reserve space with reserve() (one compare-and-swap on the segment's
// allocation offset, no lock), then write_entry() copies the payload straight
// into the mapping and publishes the entry by storing its length last.
// Whoever runs the log's round alone calls seal(), close(), stage() and
// committed(): seal() waits until every entry reserved before it has been
// published, then writes the marker that makes the section replayable;
// stage() hands what was sealed to the storage, commit() (any one thread)
// makes it durable, and committed() records that. So the one durability
// protocol of a segment is
//
//   reserve -> write_entry -> seal -> stage -> commit -> committed
//
// With format::kFlagSyncedMarks in its flags, each marker also records where
// the last committed() flush of this segment ended.
//
// Lifetime: the File (and so the mapping) lives as long as this object.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "commitlog/clock.h"
#include "commitlog/file_system.h"
#include "segment/storage/buffer_pool.h"
#include "segment/storage/prepare_ahead.h"
#include "segment/storage/published_entries.h"
#include "segment/format.h"
#include "segment/storage/segment_storage.h"
#include "commitlog/status.h"

namespace commitlog {
namespace crypto {
class SharedSealer;
}  // namespace crypto

struct SegmentFileInfo {
  uint64_t id = 0;
  uint64_t capacity = 0;  // bytes; the file's preallocated size
  uint16_t flags = 0;
  uint64_t previous_id = 0;  // see format::kHeaderPreviousIdOffset
  uint32_t permissions = kDefaultFilePermissions;  // the file's (FileSystem::open)
  // format::kFlagEncrypted: the master keys (SectionOptions::keys, and the
  // data key of each segment with format::kFlagSealedEntries); and
  // whether its sections are compressed, which without encryption they are.
  const KeyProvider* keys = nullptr;
  bool lz4 = true;
};

class MappedSegment {
 public:
  // Creates `dir`/CommitLog-<v>-<id>.log (preallocated and mapped, or, with
  // kFlagLz4Sections in info.flags or a `mode` other than kMapped, backed by a
  // buffer from `pool`), writes and syncs its header, and syncs the directory.
  // Runs on the allocator thread. A compressed segment takes direct payloads
  // only with kFlagFlushGroups; a compressed kDirect one needs kFlagWholeBlocks.
  // `clock` times the seals' waits for producers; it must outlive the segment.
  // kClosed when `pool` is shut (BufferPool::shut) before a buffer is free.
  // With `spare` (a plain segment in kStandard or kDirect only), the segment
  // is written over that file (commitlog/lifecycle/spare_segments.h), which is
  // renamed to the segment's name once its header is durable; on an error
  // the spare is the caller's to remove, under whichever name it has.
  static Result<std::unique_ptr<MappedSegment>> create(FileSystem& fs, const Clock& clock,
                                                       const std::string& dir,
                                                       SegmentFileInfo info,
                                                       BufferPool* pool = nullptr, StorageMode mode = {},
                                                       const std::optional<std::string>& spare = std::nullopt);
  ~MappedSegment();

  uint64_t id() const { return info_.id; }
  uint64_t capacity() const { return info_.capacity; }
  uint16_t flags() const { return info_.flags; }
  const std::string& path() const { return path_; }

  // Reserves `bytes` (a multiple of 8) and returns their offset, or nullopt
  // when the segment is closed or the bytes do not fit. Thread-safe, lock-free.
  std::optional<uint64_t> reserve(uint64_t bytes);
  // Largest footprint reserve() can ever grant in a fresh segment.
  uint64_t max_reservation() const;
  // The footprint of an entry with `payload_size` bytes of payload (sealed
  // entries store a tag after it).
  uint64_t footprint(uint64_t payload_size) const {
    return format::entry_footprint(format::stored_payload_size(payload_size, info_.flags));
  }

  // Writes one entry at `offset` (inside a reservation). Thread-safe for
  // disjoint reservations. Publishes the entry with a release store of its
  // length, after everything else. With format::kFlagSealedEntries its
  // payload is sealed on the calling thread. With `direct`, the payload
  // bypasses the image (SegmentStorage::write_direct, told
  // `caller_blocks_thread`); returns whether it did. An error (libcrypto
  // failed to seal) comes after the entry is published, unreadable.
  [[nodiscard]] Result<bool> write_entry(uint64_t offset, uint32_t table, uint64_t time_us,
                   std::span<const std::byte> payload, bool direct = false, bool caller_blocks_thread = true);

  // The round only. -------------------------------------------------------
  // Refuses further reservations; the end marker goes at the returned
  // offset. Idempotent. May also be called by the producer that found the
  // segment full.
  uint64_t close();
  bool closed() const;
  // Seals everything reserved so far into a section: places the next marker
  // (or, once closed, the end-of-segment marker), waits for every reserved
  // entry to be published, and writes the section's marker. Returns the
  // offset up to which entries are now sealed.
  uint64_t seal();
  // What stage() handed to the storage.
  struct Staged {
    StagedWrite write;  // empty: nothing was sealed since the last stage()
    uint64_t tail = 0;  // entries below this offset are durable once committed
    bool last = false;  // holds the end marker
  };
  // Writes everything sealed since the last stage() to the file
  // (SegmentStorage::stage()). A failed stage() changes nothing here; the
  // next one covers the range again.
  Result<Staged> stage(bool hold_headers);
  // Makes `staged` durable. Any one thread at a time, also while stage()
  // runs; an empty Staged costs nothing.
  Status commit(const Staged& staged) const;
  // The round, once commit(staged) succeeded (in stage() order).
  void committed(const Staged& staged);
  // True once the end marker is written and flushed.
  bool finished() const { return finished_; }
  // The round: the image below this offset is durable and final (once
  // finished(), the end marker's offset). A replay finds every entry below it.
  uint64_t durable_offset() const { return synced_; }
  // Unmaps and closes the file (and gives back the buffer) of a finished segment.
  void release_file();
  // Image bytes made durable and the file bytes that took (compression ratio).
  uint64_t image_bytes_persisted() const {
    return storage_ ? storage_->image_bytes_persisted() : image_bytes_persisted_;
  }
  uint64_t file_bytes_written() const {
    return storage_ ? storage_->file_bytes_written() : file_bytes_written_;
  }
  // Bytes reserved so far (entries and markers), for metrics and tests.
  uint64_t used() const;
  // Anything reserved (or a close) since the last seal.
  bool has_unsealed() const;
  // Anything sealed or reserved since the last flush.
  bool has_unflushed() const;
  // Asks the storage to prepare the image ahead of the producers
  // (SegmentStorage::prepare): the pages after what they have reserved, for
  // four times what they reserved since the previous call (at least 64 KiB,
  // at most 4 MiB), once less than half of that is left prepared. Sync
  // thread, after a seal or a flush; a no-op once closed.
  void prepare_ahead();
  // Entries sealed since the last call (seal() counts them as it waits for them).
  uint64_t take_sealed_entries() { return entries_.take_count(); }
  // Seals since the last call that found a reserved entry not yet written and
  // waited for its producer, and how long they waited in all.
  using PublishWaits = PublishedEntries::Waits;
  PublishWaits take_publish_waits() { return entries_.take_waits(); }
  // The tables of the entries sealed so far, sorted by id; complete once
  // finished(). seal() learns them while it waits for entries to be
  // published, so producers pay nothing for them.
  const std::vector<TableExtent>& tables() const { return entries_.tables(); }

 private:
  MappedSegment(std::unique_ptr<SegmentStorage> storage, const Clock& clock, std::string path,
                SegmentFileInfo info, std::unique_ptr<crypto::SharedSealer> sealer);
  void write_marker(uint64_t at, uint64_t next);
  // write_entry()'s sealing of `payload` into the image, as `direct` has it
  // written; returns whether it went direct, or why libcrypto failed.
  Result<bool> seal_entry(uint64_t offset, uint32_t length, uint32_t table, uint64_t time_us,
                          std::span<const std::byte> payload, bool direct, bool caller_blocks_thread);

  std::unique_ptr<SegmentStorage> storage_;
  const std::unique_ptr<crypto::SharedSealer> sealer_;  // sealed entries: the data key
  const std::string path_;
  const SegmentFileInfo info_;
  std::byte* const base_;
  alignas(64) std::atomic<uint64_t> alloc_;
  // Sync-thread state.
  alignas(64) uint64_t open_marker_;   // marker slot of the section being filled
  PublishedEntries entries_;
  uint64_t flush_from_ = 0;            // the next flush starts here
  // Below this offset the image is durable and final: what markers record
  // as `synced` (format::kFlagSyncedMarks).
  uint64_t synced_;
  PrepareAhead ahead_;
  bool dirty_ = false;                 // sealed bytes not flushed yet
  bool end_marker_written_ = false;
  uint64_t image_bytes_persisted_ = 0, file_bytes_written_ = 0;  // kept after release_file()
  bool finished_ = false;
};

}  // namespace commitlog
