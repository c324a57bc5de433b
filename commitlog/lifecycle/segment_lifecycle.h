// SPDX-License-Identifier: Apache-2.0
// What happens to a segment after it is written: it is archived (when
// archiving is on), deleted once every table it holds is discarded, and
// counted against the log's space limits.
//
// Dirty and clean. A segment holds, per table, entries up to its last one
// (MappedSegment::tables(), learned by the rounds while sealing).
// discard(table, up_to) says everything of `table` at positions <= up_to is
// persisted elsewhere; per table only the highest such position is kept. A
// segment is clean when, for each table it holds, that table's discarded
// position is at or after its last entry there. A segment is deleted -- its
// file removed, then the directory synced -- when it is finished, clean,
// archived if archiving is on, and older than the active segment: the newest
// segment of a process is never deleted, so the next process's ids (one above
// the highest on disk, segment_allocator.h) stay above every position that
// was ever discarded. Segments may go in any order, as in Cassandra.
//
// Segments from before this process ("old" segments: every file in the
// directory at open) count against the limits from the start and are read
// once, on the lifecycle thread, to learn their tables
// (segment_tables.h); then the same rule deletes them, though not before the
// first discard(): until then the embedder may still be replaying them. So
// replay before discarding: a discard at a position of this process covers
// every old segment of that table. An old segment found damaged is never
// deleted; it is printed once on stderr and left to the operator. One that
// was never written (all zeros) holds no table.
//
// Space. total_bytes() is the files' size: finished and old segments as on
// disk; the segments not finished yet at their capacity, except the active one
// of a compressed log at the bytes it used. (The one segment the allocator
// prepares ahead is not counted.) Over the soft limit, total_space, the
// lifecycle thread calls on_flush_request with the tables dirty in the oldest
// segments that cover the excess: after each segment switch or finished
// segment, and again every second while over it -- the embedder should
// coalesce requests. The callback may call discard(), but must not close the
// log. The hard limit is the SpaceThrottle's (space_throttle.h), measured as
// total_bytes() but with the active segment at the bytes it used, so the
// back-pressure rises with every append rather than per segment.
//
// Recycling. A segment this process wrote that would be deleted becomes a
// spare instead (spare_segments.h) while the pool takes it and the files
// stay within the soft limit; spares count in total_bytes() (they are the
// log's disk) but not against the hard limit, since the next segments are
// made of them. At close, the last segment, when it holds no entry, is
// parked as a spare (park_empty_last()): an idle open and close leaves no
// segment behind.
//
// Sealing. Each segment this process finishes is sealed on the lifecycle
// thread before it is archived; a seal that cannot be written is reported
// and leaves the segment as a crash would, its tail unproved.
//
// Threads: the lifecycle thread (its own) reads old segments, runs archive
// commands, deletes, and calls on_flush_request with no lock held.
// on_finished() is called by the round, discard() and the accessors by
// any thread, admit() and notify_switch() by producers.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "commitlog/options.h"
#include "commitlog/position.h"
#include "commitlog/lifecycle/segment_chain.h"
#include "commitlog/lifecycle/space_throttle.h"
#include "commitlog/lifecycle/spare_segments.h"

namespace commitlog {

struct LifecycleCounters {
  uint64_t segments = 0;          // files of the log now, the active one included
  uint64_t total_bytes = 0;       // total_bytes()
  uint64_t deleted = 0;           // segments deleted
  uint64_t recycled = 0;          // segments made spares instead
  uint64_t spares = 0;            // spare files kept now
  uint64_t archived = 0;          // archive commands that succeeded
  uint64_t archive_failures = 0;  // ... that failed: those segments are kept
  uint64_t delete_failures = 0;   // removals that failed: those segments are kept
  uint64_t flush_requests = 0;    // calls of on_flush_request
};

class SegmentLifecycle {
 public:
  // `archive` may be empty (no archiving). `chain` and `spares` (may be
  // null: no recycling) must outlive this object.
  SegmentLifecycle(const Options& options, ArchiveHook archive, const SegmentChain& chain,
                   SpareSegments* spares = nullptr);
  ~SegmentLifecycle();  // stop()

  SegmentLifecycle(const SegmentLifecycle&) = delete;
  SegmentLifecycle& operator=(const SegmentLifecycle&) = delete;

  // Lists the old segments (ids below the chain's first) and starts the
  // thread. Call once, after the chain has started.
  [[nodiscard]] Status start();
  // Wakes producers waiting for space (kClosed from then on), runs a last
  // pass -- archiving and deleting what is due -- and stops the thread. Call
  // after the sync thread stopped, so that every segment is finished.
  // Idempotent.
  void stop();
  // Whether the caller runs on this object's thread (in one of the
  // embedder's callbacks), which stop() would wait for.
  bool on_own_thread() const;

  // The round: `segment` is finished and its file released.
  void on_finished(const MappedSegment& segment);
  // A producer switched segments: the sizes changed. (A segment may finish
  // before the next one is active, so on_finished() alone is not enough.)
  void notify_switch();
  // After stop(), once the allocator has stopped (so no segment after it is
  // left to name it as previous): the last segment, if it holds no entry,
  // becomes a spare.
  void park_empty_last();
  // Everything of `table` at positions <= up_to is persisted elsewhere.
  void discard(uint32_t table, Position up_to);
  // Producers: back-pressure under the hard limit.
  [[nodiscard]] Status admit(TimePoint deadline) { return throttle_.admit(deadline); }

  uint64_t total_bytes() const;
  LifecycleCounters counters() const;
  ThrottleCounters throttle_counters() const { return throttle_.counters(); }

 private:
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

  void run();
  void pass();
  void learn();
  void seal();
  void archive();
  void remove_clean();
  bool recycle(uint64_t id, const std::string& path);
  void request_flushes();
  bool clean_locked(uint64_t id, const Record& record) const;
  uint64_t soft_limit() const;
  uint64_t pressure_bytes() const;

  FileSystem& fs_;
  Clock& clock_;
  const std::string dir_;
  const uint64_t capacity_;
  const bool compressed_;
  const std::shared_ptr<const KeyProvider> keys_;  // to read the tables of encrypted segments
  const uint64_t total_space_, hard_limit_;
  const ArchiveHook archive_;
  const FlushRequest on_flush_request_;
  const SegmentChain& chain_;
  SpareSegments* const spares_;
  SpaceThrottle throttle_;

  // Bytes of every record; the oldest unfinished segment of the chain. Read
  // by producers (pressure_bytes); on_finished raises retained_ first, so a
  // producer may count a segment twice, never not at all.
  std::atomic<uint64_t> retained_{0};
  std::atomic<uint64_t> next_unfinished_;
  std::atomic<uint64_t> deleted_{0}, recycled_{0}, archived_{0}, archive_failures_{0}, delete_failures_{0},
      flush_requests_{0};

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<uint64_t, Record> records_;                  // by id; guarded by mu_
  std::unordered_map<uint32_t, Position> discarded_;    // guarded by mu_
  uint64_t finished_ = 0;                               // on_finished calls; guarded by mu_
  bool work_ = false;                                   // guarded by mu_
  bool stopping_ = false;                               // guarded by mu_
  bool stopped_ = false;                                // guarded by mu_

  // Lifecycle-thread state.
  std::vector<std::byte> buffer_;
  bool over_soft_limit_ = false;
  uint64_t finished_at_last_request_ = ~uint64_t{0};
  TimePoint last_request_{};
  ClockSubscription clock_moves_;  // wakes run() for a retry due on the clock
  std::thread thread_;
};

}  // namespace commitlog
