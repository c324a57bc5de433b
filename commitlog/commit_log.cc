// SPDX-License-Identifier: Apache-2.0
#include "commitlog/commit_log.h"

// The write path, in the order a newcomer should read the files:
//   append() -> SegmentChain::active() -> MappedSegment::reserve() (one CAS)
//   -> MappedSegment::write_entry() (one copy into the segment's image)
//   -> SyncPolicy::after_append() (policies/) -> SyncThread: the policy's plan,
//   then seal (markers) -> FlushPipeline: stage, commit (msync/fdatasync),
//   committed -> DurableWaiters::advance() -> every waiting fiber or thread wakes.
//
// After the write path, a segment's life (commitlog/segment_lifecycle.h):
// finished by the sync thread -> archived (archiver.h) -> deleted once
// discard() has covered every table in it; its size counts against
// total_space (flush requests) and the hard limit (space_throttle.h).

#include "commitlog/access_mode.h"
#include "commitlog/archiver.h"
#include "commitlog/cdc_writer.h"
#include "commitlog/crashed_run_seal.h"
#include "commitlog/directory_lock.h"
#include "commitlog/durable_waiters.h"
#include "commitlog/failure_policy.h"
#include "commitlog/segment_allocator.h"
#include "commitlog/segment_chain.h"
#include "commitlog/segment_lifecycle.h"
#include "commitlog/sync_thread.h"
#include "segment/format.h"

namespace commitlog {
namespace {

Log2Histogram histogram(const std::atomic<uint64_t>* buckets, size_t n, uint64_t sum) {
  Log2Histogram h;
  for (size_t b = 0; b < n; ++b) h.counts.push_back(buckets[b].load(std::memory_order_relaxed));
  h.sum = sum;
  return h;
}

uint16_t segment_flags(const Options& o, const AccessModeChoice& mode) {
  if (o.compression != Compression::kLz4) return format::kFlagSyncedMarks;
  return format::kFlagSyncedMarks | format::kFlagLz4Sections |
         (o.direct_write_threshold > 0 ? format::kFlagFlushGroups : 0) |
         (mode.mode == DiskAccessMode::kDirect ? format::kFlagWholeBlocks : 0);
}

}  // namespace

// Members are declared in dependency order, so they are destroyed sync
// thread first, allocator last, and the directory's lock after all of them.
// The chain hands finished segments to the lifecycle on the sync thread.
struct CommitLog::Impl {
  Impl(std::unique_ptr<FileLock> l, const Options& o, AccessModeChoice mode, std::unique_ptr<SyncPolicy> p,
       uint64_t first_id)
      : directory_lock(std::move(l)),
        options(o),
        access_mode(std::move(mode)),
        policy(std::move(p)),
        image_buffers(o.segment_size, o.max_compression_buffers_in_pool),
        clock(*o.clock),
        allocator(*o.file_system, clock, o.directory,
                  {.capacity = o.segment_size, .flags = segment_flags(o, access_mode), .permissions = o.file_mode},
                  first_id, &image_buffers, access_mode.storage()),
        waiters(clock, o.spin_wait, [this](const Status& error) { allocator.fail(error); }),
        chain(
            allocator, [this] { sync_thread->notify_switch(); },
            [this](MappedSegment& finished) { lifecycle->on_finished(finished); }) {}

  // `since`: when the caller began to need `packed` durable (an append's
  // policy decision reads the clock anyway; one read less per append).
  Status wait_packed(uint64_t packed, TimePoint since) {
    if (waiters.durable(packed)) return {};
    Status status = waiters.wait_durable(packed, [this] { sync_thread->notify_waiter(); });
    commit_waits.fetch_add(1, std::memory_order_relaxed);
    commit_wait_nanos.fetch_add(nanos_since(since), std::memory_order_relaxed);
    return status;
  }

  // By a producer about to wait for durability. A plain thread runs the flush
  // itself when no round is running: that saves the two thread hand-offs of
  // asking the sync thread and being woken by it. A fiber always asks: its
  // scheduler thread must not block in a syscall.
  void request_sync() {
    if (DurableWaiters::caller_blocks_thread() && sync_thread->lead_flush()) return;
    sync_thread->request_sync();
  }

  Status apply_policy(uint64_t packed) {
    ProducerView view{clock.now(), waiters.last_flush_started()};
    switch (policy->after_append(view)) {
      case ProducerAction::kReturn:
        return {};
      case ProducerAction::kWaitDurable:
        return wait_packed(packed, view.now);
      case ProducerAction::kRequestSyncAndWait:
        request_sync();
        return wait_packed(packed, view.now);
      case ProducerAction::kWaitForSyncToCatchUp:
        do {
          CL_RETURN_IF_ERROR(waiters.wait_flush_started_after(view.last_flush_started));
          view = {clock.now(), waiters.last_flush_started()};
        } while (policy->after_append(view) == ProducerAction::kWaitForSyncToCatchUp);
        return {};
    }
    return {};
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
    if (policy->after_append(view) != ProducerAction::kWaitDurable) request_sync();
    return wait_packed(packed, view.now);
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

Result<std::unique_ptr<FileLock>> CommitLog::lock_directory(const Options& options) {
  FileSystem& fs = *options.file_system;
  CL_RETURN_IF_ERROR(fs.create_dirs(options.directory, options.directory_mode));
  return lock_log_directory(fs, options.directory, options.file_mode);
}

Result<std::unique_ptr<CommitLog>> CommitLog::open(const Options& options) {
  return open(options, nullptr);
}

// `lock`: null to take it here, once the options are known to be usable.
Result<std::unique_ptr<CommitLog>> CommitLog::open(const Options& options, std::unique_ptr<FileLock> lock) {
  FileSystem& fs = *options.file_system;
  // Markers hold 32-bit offsets (format::kFlagSyncedMarks).
  static_assert(format::kMaxSyncedMarksCapacity < (uint64_t{1} << DurableWaiters::kOffsetBits));
  CL_RETURN_IF_ERROR(check_options(options));
  ArchiveHook archive = options.archive_segment;
  if (!archive && !options.archiving_properties.empty()) {
    auto properties = load_archiving_properties(options.archiving_properties, fs);
    if (!properties.ok()) return properties.status();
    archive = archive_command_hook(properties->archive_command);
  }
  CL_RETURN_IF_ERROR(fs.create_dirs(options.directory, options.directory_mode));
  auto policy = PolicyRegistry::global().create(options.sync_policy, options.policy);
  if (!policy.ok()) return policy.status();
  auto mode = choose_access_mode(options, options.directory);
  if (!mode.ok()) return mode.status();
  if (lock == nullptr) {
    auto taken = lock_log_directory(fs, options.directory, options.file_mode);
    if (!taken.ok()) return taken.status();
    lock = std::move(taken).value();
  } else if (lock->path() != lock_file_path(options.directory)) {
    return Status::invalid_argument("open " + options.directory + " with the lock of " + lock->path() +
                                    ": not this directory's");
  }
  // Only under the lock: until then another owner may be writing segments.
  CL_RETURN_IF_ERROR(seal_crashed_runs(fs, options.directory));
  auto first_id = next_segment_id(fs, *options.clock, options.directory);
  if (!first_id.ok()) return first_id.status();

  auto impl = std::make_unique<Impl>(std::move(lock), options, std::move(mode).value(),
                                     std::move(policy).value(), *first_id);
  CL_RETURN_IF_ERROR(impl->chain.start());
  impl->initial_allocation_waits = impl->allocator.waits();
  impl->lifecycle = std::make_unique<SegmentLifecycle>(options, std::move(archive), impl->chain);
  CL_RETURN_IF_ERROR(impl->lifecycle->start());
  if (options.cdc.enabled) {
    impl->cdc = std::make_unique<CdcWriter>(impl->options);
    CL_RETURN_IF_ERROR(impl->cdc->start());
  }
  impl->sync_thread = std::make_unique<SyncThread>(
      impl->clock, impl->chain, impl->waiters, *impl->policy, options.commit_failure_policy,
      options.compression == Compression::kLz4, impl->cdc.get());
  return std::unique_ptr<CommitLog>(new CommitLog(std::move(impl)));
}

CommitLog::CommitLog(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

CommitLog::~CommitLog() { close().ignore(); }

Result<Position> CommitLog::append(uint32_t table, std::span<const std::byte> payload,
                                   AppendOptions options) {
  const Mutation mutation{table, payload};
  auto range = append_batch({&mutation, 1}, options);
  if (!range.ok()) return range.status();
  return range->first;
}

Result<AppendedRange> CommitLog::append_batch(std::span<const Mutation> mutations,
                                              AppendOptions options) {
  Impl& s = *impl_;
  if (mutations.empty()) return Status::invalid_argument("append_batch: no mutations");
  const uint64_t limit = s.options.effective_max_mutation_size();
  for (size_t i = 0; i < mutations.size(); ++i) {
    if (mutations[i].payload.size() > limit) {
      s.oversized.fetch_add(1, std::memory_order_relaxed);
      return Status::invalid_argument(
          "mutation" + (mutations.size() > 1 ? " " + std::to_string(i) + " of the batch" : std::string()) +
          ": payload of " + std::to_string(mutations[i].payload.size()) +
          " bytes exceeds max_mutation_size of " + std::to_string(limit) + " bytes");
    }
  }
  if (s.closed.load(std::memory_order_acquire)) return Status::closed("the commit log is closed");
  if (s.waiters.failed()) return s.waiters.error();
  if (s.cdc) {
    for (const Mutation& m : mutations) CL_RETURN_IF_ERROR(s.cdc->admit(m.table));
  }
  CL_RETURN_IF_ERROR(s.lifecycle->admit(options.deadline));

  const uint64_t time_us = s.clock.wall_micros();
  const uint64_t direct_threshold = s.options.direct_write_threshold;
  uint64_t direct_writes = 0;
  AppendedRange range;
  uint64_t last_packed = 0;
  MappedSegment* segment = s.chain.active();
  for (size_t begin = 0; begin < mutations.size();) {
    // As many mutations as fit in one segment share one reservation.
    uint64_t bytes = 0;
    size_t end = begin;
    while (end < mutations.size()) {
      const uint64_t footprint = format::entry_footprint(mutations[end].payload.size());
      if (end > begin && bytes + footprint > segment->max_reservation()) break;
      bytes += footprint;
      ++end;
    }
    std::optional<uint64_t> offset;
    while (!(offset = segment->reserve(bytes))) {
      const TimePoint switch_started = s.clock.now();
      auto next = s.chain.advance(segment);
      s.segment_waits.fetch_add(1, std::memory_order_relaxed);
      s.segment_wait_nanos.fetch_add(s.nanos_since(switch_started), std::memory_order_relaxed);
      if (!next.ok()) {
        // After a sticky failure the allocator hands out that error; it is
        // reported once, where it happened.
        if (next.status().code() != ErrorCode::kClosed && !s.waiters.failed()) {
          apply_failure_policy(s.options.commit_failure_policy, "segment allocation", next.status(), s.waiters);
        }
        return next.status();
      }
      segment = *next;
      s.lifecycle->notify_switch();
    }
    for (size_t i = begin; i < end; ++i) {
      const std::span<const std::byte> payload = mutations[i].payload;
      const bool direct = direct_threshold != 0 && payload.size() >= direct_threshold;
      if (segment->write_entry(*offset, mutations[i].table, time_us, payload, direct))
        ++direct_writes;
      const Position position{segment->id(), *offset};
      if (i == 0) range.first = position;
      range.last = position;
      *offset += format::entry_footprint(mutations[i].payload.size());
    }
    last_packed = DurableWaiters::pack(s.chain.ordinal(*segment), range.last.offset);
    begin = end;
  }
  if (direct_writes != 0) s.direct_writes.fetch_add(direct_writes, std::memory_order_relaxed);
  CL_RETURN_IF_ERROR(s.finish_append(last_packed, options.wait));
  return range;
}

Status CommitLog::wait_durable(Position position) {
  Impl& s = *impl_;
  if (position.segment < s.chain.first_id()) return {};
  if (position.segment > s.chain.active()->id()) {
    return Status::invalid_argument("wait_durable: position " + position.to_string() +
                                    " was never appended");
  }
  return s.wait_durable(DurableWaiters::pack(position.segment - s.chain.first_id(), position.offset));
}

Status CommitLog::sync() {
  Impl& s = *impl_;
  if (s.waiters.failed()) return s.waiters.error();
  MappedSegment* segment = s.chain.active();
  // Every entry reserved so far starts below used(); the flush's sealed tail
  // will be at least used().
  const uint64_t target = DurableWaiters::pack(s.chain.ordinal(*segment), segment->used());
  if (s.waiters.durable(target - 1)) return {};
  s.sync_thread->request_explicit_flush();
  return s.waiters.wait_durable(target - 1);
}

Status CommitLog::close() {
  Impl& s = *impl_;
  if (!s.closed.exchange(true)) {
    // Everything appended is made durable before the segment is finished, so
    // its end marker records all of it as durable (format.h, version 2).
    sync().ignore();  // a failed log reports its error below
    s.chain.shut();
    s.sync_thread->stop();
    if (s.cdc) s.cdc->stop();
    s.lifecycle->stop();
    s.allocator.stop();
    s.directory_lock.reset();  // nothing of this log touches the directory any more
  }
  return s.waiters.error();
}

PolicyPromise CommitLog::policy_promise() const { return impl_->policy->promise(); }

CommitLogStats CommitLog::stats() const {
  const Impl& s = *impl_;
  const SyncCounters& c = s.sync_thread->counters();
  CommitLogStats out;
  out.flushes = c.flushes.load();
  out.seals = c.seals.load();
  out.flushed_mutations = c.flushed_entries.load();
  out.flush_nanos = c.flush_nanos.load();
  out.image_bytes = c.image_bytes.load();
  out.file_bytes = c.file_bytes.load();
  out.segment_switches = s.chain.switches();
  out.allocation_waits = s.allocator.waits() - s.initial_allocation_waits;
  out.producers_waiting = s.waiters.waiting();
  const uint64_t packed = s.waiters.durable_packed();
  out.durable = {s.chain.first_id() + (packed >> DurableWaiters::kOffsetBits),
                 packed & ((uint64_t{1} << DurableWaiters::kOffsetBits) - 1)};
  return out;
}

Status CommitLog::discard(uint32_t table, Position up_to) {
  Impl& s = *impl_;
  if (s.closed.load(std::memory_order_acquire)) return Status::closed("the commit log is closed");
  if (up_to.segment > s.chain.active()->id()) {
    return Status::invalid_argument("discard: position " + up_to.to_string() + " was never appended");
  }
  s.lifecycle->discard(table, up_to);
  return {};
}

MetricsSnapshot CommitLog::metrics() const {
  const Impl& s = *impl_;
  const SyncCounters& c = s.sync_thread->counters();
  const LifecycleCounters l = s.lifecycle->counters();
  const ThrottleCounters t = s.lifecycle->throttle_counters();
  MetricsSnapshot m;
  m.disk_access_mode_setting = access_mode_name(s.options.disk_access_mode);
  m.disk_access_mode = access_mode_name(s.access_mode.mode);
  m.disk_access_mode_reason = s.access_mode.reason;
  m.failed = s.waiters.failed();
  if (m.failed) m.failure = s.waiters.error().to_string();
  m.sync_failures = c.sync_failures.load();
  m.mutations_completed = c.flushed_entries.load();
  m.producers_waiting = s.waiters.waiting();
  m.producers_waiting_for_space = t.waiting;
  m.total_log_bytes = l.total_bytes;
  m.segments = l.segments;
  m.segment_waits = s.segment_waits.load();
  m.segment_wait_nanos = s.segment_wait_nanos.load();
  m.seal_waits = c.seal_waits.load();
  m.seal_wait_nanos = c.seal_wait_nanos.load();
  m.producer_flushes = c.led_flushes.load();
  const SpinCounters& spins = s.waiters.spin_counters();
  m.spins = spins.spins.load();
  m.spins_missed = spins.missed.load();
  m.spin_nanos = spins.nanos.load();
  m.commit_waits = s.commit_waits.load();
  m.commit_wait_nanos = s.commit_wait_nanos.load();
  m.sync_latency_us = histogram(c.flush_latency_us, SyncCounters::kGroupSizeBuckets, c.flush_nanos.load() / 1000);
  m.mutations_per_sync = histogram(c.group_sizes, SyncCounters::kGroupSizeBuckets, c.flushed_entries.load());
  for (size_t r = 0; r < m.syncs_by_reason.size(); ++r) m.syncs_by_reason[r] = c.by_reason[r].load();
  m.oversized_mutations = s.oversized.load();
  m.direct_writes = s.direct_writes.load();
  m.throttled_appends = t.delayed;
  m.throttle_nanos = t.delay_nanos;
  m.space_waits = t.waits;
  m.space_wait_nanos = t.wait_nanos;
  m.space_timeouts = t.timeouts;
  m.segments_deleted = l.deleted;
  m.segments_archived = l.archived;
  m.archive_failures = l.archive_failures;
  m.delete_failures = l.delete_failures;
  m.flush_requests = l.flush_requests;
  if (s.cdc) {
    const CdcCounters cdc = s.cdc->counters();
    m.cdc_raw_bytes = cdc.raw_bytes;
    m.cdc_segments_linked = cdc.segments_linked;
    m.cdc_segments_deleted = cdc.segments_deleted;
    m.cdc_appends_refused = cdc.appends_refused;
    m.cdc_failures = cdc.failures;
  }
  return m;
}

const Options& CommitLog::options() const { return impl_->options; }

}  // namespace commitlog
