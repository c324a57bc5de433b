// SPDX-License-Identifier: Apache-2.0
// Keeps the next segment ready: a background thread creates, preallocates,
// maps and syncs it ahead of time, so in steady state a producer that fills a
// segment switches to the next one without waiting for a file to be created.
// waits() counts the times a producer had to wait anyway.
//
// Segment ids are consecutive within a process, starting above every id
// already on disk (and above the wall clock in milliseconds, as Cassandra
// does, so ids keep increasing after every segment was deleted).
//
// Thread-safety: take() may be called from any thread or fiber; one at a time
// is the expected use (the log calls it under its switch lock). A fiber that
// has to wait in take() suspends, so its scheduler thread runs other fibers.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include <boost/fiber/condition_variable.hpp>

#include "commitlog/lifecycle/spare_segments.h"
#include "segment/storage/mapped_segment.h"

namespace commitlog {

class SegmentAllocator {
 public:
  // Each segment is made as `shape` says (its id and previous_id aside).
  // `pool` (may be null for mapped plain segments) must outlive the allocator;
  // fail() and stop() shut it.
  // `clock` must outlive the allocator and its segments.
  // `spares` (may be null) must outlive the allocator: a segment is made
  // from a spare file when it has one (spare_segments.h).
  SegmentAllocator(FileSystem& fs, const Clock& clock, std::string dir, SegmentFileInfo shape,
                   uint64_t first_id, BufferPool* pool = nullptr, StorageMode mode = {},
                   SpareSegments* spares = nullptr);
  ~SegmentAllocator();  // stop()

  // Stops the thread; a prepared, unused segment becomes a spare or is
  // removed. Idempotent; take() fails afterwards.
  void stop();
  // The log has failed for good (a sticky error): take(), waiting now or
  // later, returns `error`, and the thread stops making segments, also one
  // waiting for a pool buffer (which shuts the pool: with the log stopped no
  // segment finishes to give one back). The first error wins.
  void fail(const Status& error);

  // The next segment, waiting for it if it is not ready yet. An error from
  // creating it (ENOSPC, EIO), fail()'s error or kClosed after stop() is
  // returned here, rather than a segment prepared before.
  Result<std::unique_ptr<MappedSegment>> take();
  uint64_t waits() const;
  uint64_t first_id() const { return first_id_; }

 private:
  void run();
  Result<std::unique_ptr<MappedSegment>> make(const SegmentFileInfo& info);

  FileSystem& fs_;
  const Clock& clock_;
  const std::string dir_;
  const SegmentFileInfo shape_;
  const uint64_t first_id_;
  BufferPool* const pool_;
  const StorageMode mode_;
  SpareSegments* const spares_;
  mutable std::mutex mu_;
  std::condition_variable work_cv_;                  // wakes the allocator thread
  boost::fibers::condition_variable_any ready_cv_;  // wakes take(): suspends only a fiber
  uint64_t next_id_;                          // guarded by mu_
  std::unique_ptr<MappedSegment> ready_;      // guarded by mu_
  Status error_;                              // guarded by mu_
  uint64_t waits_ = 0;                        // guarded by mu_
  bool stopping_ = false;                     // guarded by mu_
  std::thread thread_;
};

// The first id for a new process: above every segment id and spare's id in
// `dir` (spare_segments.h) and above the wall clock in milliseconds.
Result<uint64_t> next_segment_id(FileSystem& fs, const Clock& clock, const std::string& dir);

}  // namespace commitlog
