// SPDX-License-Identifier: Apache-2.0
// The facade's state: what CommitLog owns, shared by its files
// (commit_log.cc: open, append, close; commit_log_metrics.cc: the snapshot).
#pragma once

#include <atomic>
#include <memory>

#include "commitlog/commit_log.h"
#include "commitlog/cdc/cdc_writer.h"
#include "commitlog/lifecycle/access_mode.h"
#include "commitlog/lifecycle/retention/segment_lifecycle.h"
#include "commitlog/lifecycle/segment_allocator.h"
#include "commitlog/lifecycle/segment_chain.h"
#include "commitlog/write/durable_waiters.h"
#include "commitlog/write/sync_thread.h"
#include "segment/format.h"
#include "segment/storage/segment_storage.h"

namespace commitlog {

// The segment header flags of the log's new segments.
inline uint16_t segment_flags(const Options& o, const AccessModeChoice& mode) {
  if (!writes_sections(o)) {
    return format::kFlagSyncedMarks |
           (o.encryption != nullptr ? format::kFlagEncrypted | format::kFlagSealedEntries : 0);
  }
  return format::kFlagSyncedMarks | format::kFlagLz4Sections |
         (o.encryption != nullptr ? format::kFlagEncrypted : 0) |
         (o.direct_write_threshold > 0 ? format::kFlagFlushGroups : 0) |
         (mode.mode == DiskAccessMode::kDirect ? format::kFlagWholeBlocks : 0);
}

// Whether the log's new segments are made of spare files
// (lifecycle/spare_segments.h), and their files' size.
inline bool reuses_spares(const Options& o, const AccessModeChoice& mode) {
  return !writes_sections(o) && (mode.mode == DiskAccessMode::kStandard || mode.mode == DiskAccessMode::kDirect);
}
inline uint64_t segment_file_size(const Options& o, const AccessModeChoice& mode) {
  if (mode.mode != DiskAccessMode::kDirect) return o.segment_size;
  return direct_file_size(o.segment_size, mode.block_size);
}

// Members are declared in dependency order, so they are destroyed sync
// thread first, allocator last, and the directory's lock after all of them.
// The chain hands finished segments to the lifecycle on the sync thread.
struct CommitLog::Impl {
  Impl(std::unique_ptr<FileLock> l, const Options& o, AccessModeChoice mode, std::unique_ptr<SyncPolicy> p,
       uint64_t first_id, std::unique_ptr<SpareSegments> s)
      : directory_lock(std::move(l)),
        options(o),
        access_mode(std::move(mode)),
        policy(std::move(p)),
        image_buffers(o.segment_size, o.max_compression_buffers_in_pool),
        clock(*o.clock),
        spares(std::move(s)),
        allocator(*o.file_system, clock, o.directory,
                  {.capacity = o.segment_size,
                   .flags = segment_flags(o, access_mode),
                   .permissions = o.file_mode,
                   .keys = o.encryption.get(),
                   .lz4 = o.compression == Compression::kLz4},
                  first_id, &image_buffers, access_mode.storage(), spares.get()),
        waiters(clock, o.spin_wait, [this](const Status& error) { allocator.fail(error); }),
        chain(
            allocator, [this] { sync_thread->notify_switch(); },
            [this](MappedSegment& finished) { lifecycle->on_finished(finished); }) {}

  // How a producer that is about to wait gets its flush going: it asks for
  // one (batch), or only says that it waits and lets the policy decide
  // (adaptive, group).
  enum class Ask { kWaiting, kSync };

  // `since`: when the caller began to need `packed` durable (an append's
  // policy decision reads the clock anyway; one read less per append). The
  // ask is made once the producer counts as waiting, and only if it must
  // wait (DurableWaiters::wait_durable).
  Status wait_packed(uint64_t packed, TimePoint since, Ask ask) {
    if (waiters.durable(packed)) return {};
    Status status = waiters.wait_durable(packed, [this, ask] { start_flush(ask); });
    commit_waits.fetch_add(1, std::memory_order_relaxed);
    commit_wait_nanos.fetch_add(nanos_since(since), std::memory_order_relaxed);
    return status;
  }

  // A plain thread runs the flush itself when no round is running: that
  // saves the two thread hand-offs of asking the sync thread and being woken
  // by it. A fiber always asks: its scheduler thread must not block in a
  // syscall.
  void start_flush(Ask ask) {
    const bool asked = ask == Ask::kSync;
    if (DurableWaiters::caller_blocks_thread() && sync_thread->lead_flush(asked)) return;
    if (asked) {
      sync_thread->request_sync();
    } else {
      sync_thread->notify_waiter();
    }
  }

  Status apply_policy(uint64_t packed) {
    ProducerView view{clock.now(), waiters.last_flush_started()};
    switch (policy->after_append(view)) {
      case ProducerAction::kReturn:
        return {};
      case ProducerAction::kWaitDurable:
        return wait_packed(packed, view.now, Ask::kWaiting);
      case ProducerAction::kRequestSyncAndWait:
        return wait_packed(packed, view.now, Ask::kSync);
      case ProducerAction::kWaitForSyncToCatchUp:
        do {
          CL_RETURN_IF_ERROR(waiters.wait_flush_started_after(view.last_flush_started));
          view = {clock.now(), waiters.last_flush_started()};
        } while (policy->after_append(view) == ProducerAction::kWaitForSyncToCatchUp);
        return {};
    }
    // An answer outside the enum (a policy's bug) is taken at its safest.
    return wait_packed(packed, view.now, Ask::kSync);
  }

  // A wait on the caller's terms asks the policy's hook as an append that
  // follows it would, when the wait begins: so a policy that counts waiting
  // producers (adaptive) counts the waiters, not appends that never wait.
  // Whatever it answers, the caller waits until durable; a policy that
  // would not wait (periodic) is asked for a sync, so the wait is not the
  // rest of its period.
  Status wait_durable(uint64_t packed) {
    if (waiters.durable(packed)) return {};
    const ProducerView view{clock.now(), waiters.last_flush_started()};
    const bool waits = policy->after_append(view) == ProducerAction::kWaitDurable;
    return wait_packed(packed, view.now, waits ? Ask::kWaiting : Ask::kSync);
  }

  Status finish_append(uint64_t packed, AppendWait wait) {
    switch (wait) {
      case AppendWait::kPolicy: return apply_policy(packed);
      case AppendWait::kDurable: return wait_durable(packed);
      case AppendWait::kNothing: return {};
    }
    return {};
  }

  uint64_t nanos_since(TimePoint start) const {
    return static_cast<uint64_t>((clock.now() - start).count());
  }

  std::unique_ptr<FileLock> directory_lock;  // held from open() until close()
  Options options;
  const AccessModeChoice access_mode;
  std::unique_ptr<SyncPolicy> policy;
  BufferPool image_buffers;  // allocates nothing until a segment that is not mapped asks
  Clock& clock;
  std::unique_ptr<SpareSegments> spares;
  SegmentAllocator allocator;
  DurableWaiters waiters;
  SegmentChain chain;
  std::unique_ptr<SegmentLifecycle> lifecycle;
  std::unique_ptr<CdcWriter> cdc;  // with cdc_enabled
  std::unique_ptr<SyncThread> sync_thread;
  std::atomic<bool> closed{false};
  std::atomic<uint64_t> oversized{0}, segment_waits{0}, segment_wait_nanos{0}, commit_waits{0},
      commit_wait_nanos{0}, direct_writes{0};
  uint64_t initial_allocation_waits = 0;  // taking the first segment is not a stall
};

}  // namespace commitlog
