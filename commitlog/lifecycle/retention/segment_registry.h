// SPDX-License-Identifier: Apache-2.0
// The segment files the log retains, what is discarded of their tables, and
// the space they take (segment_lifecycle.h).
//
// Dirty and clean. A segment holds, per table, entries up to its last one
// (MappedSegment::tables(), learned by the rounds while sealing).
// discard(table, up_to) says everything of `table` at positions <= up_to is
// persisted elsewhere; per table only the highest such position is kept. A
// segment is clean when, for each table it holds, that table's discarded
// position is at or after its last entry there. A segment is due for
// deletion (clean()) when it is finished, clean, archived if archiving is
// on, and older than the active segment: the newest segment of a process is
// never deleted, so the next process's ids (one above the highest on disk,
// lifecycle/segment_allocator.h) stay above every position that was ever
// discarded. Segments may go in any order, as in Cassandra.
//
// Old segments (from before this process) are due only after the first
// discard(): until then the embedder may still be replaying them. So replay
// before discarding: a discard at a position of this process covers every
// old segment of that table. One found damaged (learned()) is never due.
//
// Space. total_bytes() is the files' size: finished and old segments as on
// disk; the segments not finished yet at their capacity, except the active one
// of a compressed log at the bytes it used. (The one segment the allocator
// prepares ahead is not counted.) Spares count in total_bytes() (they are the
// log's disk) but not in pressure_bytes(), the hard limit's measure
// (lifecycle/space_throttle.h), since the next segments are made of them; it
// counts the active segment at the bytes it used, so the back-pressure rises
// with every append rather than per segment.
//
// Thread-safety: every member may be called from any thread: add_old() at
// start, add_finished() by the round, discard() and the measures by any
// thread, park_last_if_empty() at close, the rest by the lifecycle thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "commitlog/lifecycle/segment_chain.h"
#include "commitlog/lifecycle/spare_segments.h"
#include "commitlog/position.h"
#include "commitlog/replay/segment_tables.h"

namespace commitlog {

class SegmentRegistry {
 public:
  // A segment file on disk that is not active or unfinished.
  struct Record {
    std::string path;
    uint64_t bytes = 0;
    bool sized = false;        // bytes measured on disk
    bool scanned = false;      // tables known
    bool keep = false;         // damaged, or its removal failed: never deleted
    bool archived = false;
    bool archive_failed = false;
    // Finished by this process: where its seal says its bytes are final,
    // until the seal is written (segment/segment_seal.h); 0 after, or for an
    // old segment.
    uint64_t unsealed_end = 0;
    std::vector<TableExtent> tables;
  };
  // A record whose tables (scan) or size on disk (size) are still to learn.
  struct Unlearned {
    SegmentFile file;
    bool scan, size;
  };
  // The tables dirty in the oldest segments, and the count of add_finished()
  // calls that they reflect.
  struct DirtyTables {
    std::vector<uint32_t> tables;
    uint64_t finished = 0;
  };

  // `chain` and `spares` (may be null) must outlive this object. `archiving`:
  // a segment is due only once archived.
  SegmentRegistry(const SegmentChain& chain, const SpareSegments* spares, uint64_t capacity, bool compressed,
                  bool archiving);

  // At start: the old segments, by id, measured on disk. Returns whether
  // there is any.
  bool add_old(std::map<uint64_t, Record> old);
  // The round: `segment` is finished and its file released.
  void add_finished(const MappedSegment& segment);
  // Everything of `table` at positions <= up_to is persisted elsewhere.
  void discard(uint32_t table, Position up_to);

  std::vector<Unlearned> unlearned() const;
  // `tables`: nullopt when not scanned; `size`: nullopt when not measured.
  void learned(uint64_t id, std::optional<SegmentTables> tables, std::optional<uint64_t> size);
  // Segments to seal, with the end their seal names.
  std::vector<std::pair<SegmentFile, uint64_t>> unsealed() const;
  void sealed(uint64_t id);
  std::vector<SegmentFile> unarchived() const;  // with their tables known
  void archived(uint64_t id, bool ok);

  // The segments due for deletion, oldest first.
  std::vector<SegmentFile> clean() const;
  void keep(uint64_t id);  // its removal failed
  // `ids` (of clean()) are gone from the disk.
  void removed(const std::vector<uint64_t>& ids);
  // At close: when the last record is the active segment, holds no table and
  // is not kept and not waiting to be archived, calls `park(path, id)` under
  // the lock; the record goes when it returns true.
  void park_last_if_empty(const std::function<bool(const std::string& path, uint64_t id)>& park);

  // Over the soft limit by `excess` bytes: the tables dirty in the oldest
  // segments that cover it (kept ones are skipped: flushing would not free
  // them).
  DirtyTables dirty_tables(uint64_t excess) const;
  uint64_t finished() const;  // add_finished() calls so far

  uint64_t total_bytes() const;
  uint64_t pressure_bytes() const;
  uint64_t segments() const;  // files of the log now, the active one included

 private:
  uint64_t measure(bool active_as_used) const;
  bool dirty_locked(uint64_t id, const TableExtent& extent) const;
  bool clean_locked(uint64_t id, const Record& record) const;

  const SegmentChain& chain_;
  const SpareSegments* const spares_;
  const uint64_t capacity_;
  const bool compressed_;
  const bool archiving_;

  // Bytes of every record; the oldest unfinished segment of the chain. Read
  // by producers (pressure_bytes); add_finished raises retained_ first, so a
  // producer may count a segment twice, never not at all.
  std::atomic<uint64_t> retained_{0};
  std::atomic<uint64_t> next_unfinished_;

  mutable std::mutex mu_;
  std::map<uint64_t, Record> records_;                // by id; guarded by mu_
  std::unordered_map<uint32_t, Position> discarded_;  // guarded by mu_
  uint64_t finished_ = 0;                             // add_finished calls; guarded by mu_
};

}  // namespace commitlog
