// SPDX-License-Identifier: Apache-2.0
// Public API. The commit log: what an embedding key-value store opens, appends to, and
// closes. replayer.h reads it back after a crash; the segment file format is
// documented with the sources (segment/FORMAT.md).
//
// A segment's life: appends fill it; once full (or at close) it is finished
// and sealed; it is archived when archiving is on, and deleted once discard()
// has covered every table in it. Its size counts against total_space (flush
// requests) and total_space_hard_limit (appends wait).
//
// Threads: the log runs three of its own, the segment allocator, the sync
// thread and the lifecycle thread. Every public member may be called
// concurrently from plain threads and from Boost.Fiber fibers on any number
// of threads; a call that waits for durability or for space suspends only the
// calling fiber.
#pragma once

// One clear message instead of a page of errors from C++20 library features.
#if __cplusplus < 202002L
#error "commitlog needs C++20: compile with -std=c++20 or later"
#else

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "commitlog/export.h"
#include "commitlog/metrics.h"
#include "commitlog/options.h"
#include "commitlog/position.h"
#include "commitlog/status.h"
#include "commitlog/sync_policy.h"

namespace commitlog {

struct COMMITLOG_EXPORT Mutation {
  uint32_t table = 0;
  std::span<const std::byte> payload;
};

// The latest time an append may wait for space under the hard limit.
using Deadline = TimePoint;  // on the log's clock (Options::clock)
inline constexpr Deadline kNoDeadline = Deadline::max();

// How long an append waits before it returns its position.
enum class AppendWait {
  kPolicy,   // as the sync policy says: periodic returns at once; batch,
             // group and adaptive wait until durable
  kDurable,  // until durable, under every policy: as append(kNothing) and
             // then wait_durable(position)
  kNothing,  // return at once, under every policy; the sync policy is not
             // asked (so periodic's lag_block does not hold it either), and
             // the mutation becomes durable with the next flush or sync()
};

struct COMMITLOG_EXPORT AppendOptions {
  AppendWait wait = AppendWait::kPolicy;
  Deadline deadline = kNoDeadline;  // bounds only a wait for space, see append()
};

struct COMMITLOG_EXPORT AppendedRange {
  Position first;  // the first mutation's position
  Position last;   // the last one's; durable implies all are
};

struct COMMITLOG_EXPORT CommitLogStats {
  uint64_t flushes = 0;            // syncs that made data durable (msync/fdatasync rounds)
  uint64_t seals = 0;              // marker-only rounds (periodic)
  uint64_t flushed_mutations = 0;  // mutations made durable
  uint64_t flush_nanos = 0;        // total time in flush rounds
  uint64_t image_bytes = 0;        // segment image bytes flushed (entries, markers)
  uint64_t file_bytes = 0;         // the file bytes they took (image / file: compression ratio)
  uint64_t segment_switches = 0;
  uint64_t allocation_waits = 0;   // times a producer waited for a new segment
  uint64_t producers_waiting = 0;  // right now
  Position durable;                // everything before this is durable
};

class COMMITLOG_EXPORT CommitLog {
 public:
  using FlushRequest = commitlog::FlushRequest;  // set as Options::on_flush_request

  // Opens a new log in options.directory (created if missing), continuing
  // the segment ids above those already there. Existing segments are left
  // alone: replay them first (commitlog/replayer.h).
  // One owner per directory: the log holds the lock file LOCK in it from
  // before it lists a segment until close(). An open of a directory that
  // another log holds, in this process or another, fails at once with
  // kBusy: "DIR: the commit log is already open in process 1234 (lock file
  // DIR/LOCK)". A killed owner's lock ends with its process.
  static Result<std::unique_ptr<CommitLog>> open(const Options& options);
  // For an embedder that replays before it opens: takes the lock open()
  // takes (creating options.directory if missing), so that nothing writes
  // the log between the replay and the open. Replay, then open with it.
  static Result<std::unique_ptr<FileLock>> lock_directory(const Options& options);
  // open() holding `lock`, which lock_directory() took for
  // options.directory; kInvalidArgument for any other lock. A failed open
  // releases the lock with the rest.
  static Result<std::unique_ptr<CommitLog>> open(const Options& options,
                                                 std::unique_ptr<FileLock> lock);
  ~CommitLog();  // close()

  CommitLog(const CommitLog&) = delete;
  CommitLog& operator=(const CommitLog&) = delete;

  // Appends one mutation and then waits as options.wait says: what the sync
  // policy says (by default), until durable, or not at all. Returns its
  // position; with kNothing, wait_durable(position) waits later. A payload
  // larger than max_mutation_size is refused and nothing is written. After
  // a failed sync (commit_failure_policy stop) every append returns that
  // error.
  // Near total_space_hard_limit the append is first delayed, and at the limit
  // it waits for space (docs/guide.md, "Sizing"); if options.deadline passes while
  // it waits, it returns kTimedOut and nothing was written. The deadline
  // bounds only that wait, not a wait for durability.
  Result<Position> append(uint32_t table, std::span<const std::byte> payload,
                          AppendOptions options = {});
  Result<Position> append(uint32_t table, std::string_view payload, AppendOptions options = {}) {
    return append(table, std::as_bytes(std::span(payload.data(), payload.size())), options);
  }
  // Appends many mutations with one space reservation per segment they land
  // in, then waits once for all of them, as options.wait says. All or
  // nothing is validated up front: one oversized mutation refuses the whole
  // batch.
  Result<AppendedRange> append_batch(std::span<const Mutation> mutations,
                                     AppendOptions options = {});

  // Everything of `table` at positions <= up_to is persisted elsewhere (the
  // embedder flushed it): segments clean for every table they hold are
  // deleted, on the log's own thread, once archived when archiving is on.
  // Positions below the first segment of this process cover the segments
  // already in the directory at open(), so replay those before the first
  // discard. Tables that no longer exist must be discarded too, or their
  // segments stay. kInvalidArgument for a position beyond the active segment;
  // kClosed after close().
  Status discard(uint32_t table, Position up_to);

  // Waits until `position` (returned by an append) is durable, and with it
  // every position before it. The wait joins the policy's next flush as an
  // append that follows it would (batch asks for a sync, group waits for
  // the window, adaptive counts the waiter in its group); under periodic it
  // asks for a sync, so it lasts about one flush. Returns at once if the
  // position is durable already. A sync that failed before the position was
  // durable fails the wait: every wait for a position it covered and, under
  // commit_failure_policy stop, every later wait and append.
  Status wait_durable(Position position);
  // Makes everything appended so far durable, and waits for it.
  Status sync();
  // Flushes everything, finishes the active segment, stops the log's
  // threads and releases the directory's lock. Further appends fail with
  // kClosed. Idempotent.
  Status close();

  // What an append that follows the sync policy is acknowledged with
  // (sync_policy.h); constant while the log is open.
  PolicyPromise policy_promise() const;

  CommitLogStats stats() const;
  // Cassandra's commit-log metrics and more; the free functions to_json(m) and
  // to_prometheus(m) of metrics.h render it.
  MetricsSnapshot metrics() const;
  const Options& options() const;

 private:
  struct COMMITLOG_HIDDEN Impl;  // defined inside the library; not part of its ABI
  explicit CommitLog(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace commitlog

#endif  // C++20
