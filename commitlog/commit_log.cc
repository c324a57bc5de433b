// SPDX-License-Identifier: Apache-2.0
#include "commitlog/commit_log.h"

// The write path, in the order a newcomer should read the files:
//   append() -> SegmentChain::active() -> MappedSegment::reserve() (one CAS)
//   -> MappedSegment::write_entry() (one copy into the segment's image)
//   -> SyncPolicy::after_append() (policies/) -> SyncThread: the policy's plan,
//   then seal (markers) -> FlushPipeline: stage, commit (msync/fdatasync),
//   committed -> DurableWaiters::advance() -> every waiting fiber or thread wakes.
//
// After the write path, a segment's life (commitlog/lifecycle/retention/segment_lifecycle.h):
// finished by the sync thread -> archived (archiver.h) -> deleted once
// discard() has covered every table in it; its size counts against
// total_space (flush requests) and the hard limit (space_throttle.h).

#include "commitlog/commit_log_impl.h"
#include "commitlog/lifecycle/archiver.h"
#include "commitlog/lifecycle/crashed_run_seal.h"
#include "commitlog/lifecycle/directory_lock.h"
#include "commitlog/util/paths.h"
#include "commitlog/write/failure_policy.h"

namespace commitlog {

Result<std::unique_ptr<FileLock>> CommitLog::lock_directory(const Options& options) {
  if (options.file_system == nullptr) return Status::invalid_argument("Options::file_system must not be null");
  FileSystem& fs = *options.file_system;
  CL_RETURN_IF_ERROR(fs.create_dirs(options.directory, options.directory_mode));
  return lock_log_directory(fs, options.directory, options.file_mode);
}

Result<std::unique_ptr<CommitLog>> CommitLog::open(const Options& options) {
  return open(options, nullptr);
}

// `lock`: null to take it here, once the options are known to be usable.
Result<std::unique_ptr<CommitLog>> CommitLog::open(const Options& options, std::unique_ptr<FileLock> lock) {
  // Markers hold 32-bit offsets (format::kFlagSyncedMarks).
  static_assert(format::kMaxSyncedMarksCapacity < (uint64_t{1} << DurableWaiters::kOffsetBits));
  CL_RETURN_IF_ERROR(check_options(options));
  FileSystem& fs = *options.file_system;
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
  } else if (resolved_path(lock->path()) != resolved_path(lock_file_path(options.directory))) {
    return Status::invalid_argument("open " + options.directory + " with the lock of " + lock->path() +
                                    ": not this directory's");
  }
  // Only under the lock: until then another owner may be writing segments.
  CL_RETURN_IF_ERROR(seal_crashed_runs(fs, options.directory, options.encryption.get()));
  auto first_id = next_segment_id(fs, *options.clock, options.directory);
  if (!first_id.ok()) return first_id.status();

  auto spares = SpareSegments::open(fs, options.directory, segment_file_size(options, *mode),
                                    reuses_spares(options, *mode), options.encryption != nullptr);
  if (!spares.ok()) return spares.status();

  auto impl = std::make_unique<Impl>(std::move(lock), options, std::move(mode).value(),
                                     std::move(policy).value(), *first_id, std::move(spares).value());
  CL_RETURN_IF_ERROR(impl->chain.start());
  impl->spares->trim();
  impl->initial_allocation_waits = impl->allocator.waits();
  impl->lifecycle = std::make_unique<SegmentLifecycle>(options, std::move(archive), impl->chain,
                                                       impl->spares.get());
  CL_RETURN_IF_ERROR(impl->lifecycle->start());
  if (options.cdc.enabled) {
    impl->cdc = std::make_unique<CdcWriter>(impl->options);
    CL_RETURN_IF_ERROR(impl->cdc->start());
  }
  impl->sync_thread = std::make_unique<SyncThread>(
      impl->clock, impl->chain, impl->waiters, *impl->policy, options.commit_failure_policy,
      writes_sections(options), impl->cdc.get());
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
  Status failed;
  // Unpinned before the wait for durability: the segment is not touched then.
  std::optional<EpochPins::Pin> pinned{s.chain.pin()};
  MappedSegment* segment = s.chain.active();
  for (size_t begin = 0; begin < mutations.size();) {
    // As many mutations as fit in one segment share one reservation.
    uint64_t bytes = 0;
    size_t end = begin;
    while (end < mutations.size()) {
      const uint64_t footprint = segment->footprint(mutations[end].payload.size());
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
      // Every reserved entry is published, even after one failed.
      Result<bool> went_direct = segment->write_entry(*offset, mutations[i].table, time_us, payload, direct,
                                                            direct && DurableWaiters::caller_blocks_thread());
      if (!went_direct.ok() && failed.ok()) failed = went_direct.status();
      if (went_direct.ok() && *went_direct) ++direct_writes;
      const Position position{segment->id(), *offset};
      if (i == 0) range.first = position;
      range.last = position;
      *offset += segment->footprint(mutations[i].payload.size());
    }
    last_packed = DurableWaiters::pack(s.chain.ordinal(*segment), range.last.offset);
    begin = end;
  }
  pinned.reset();
  if (direct_writes != 0) s.direct_writes.fetch_add(direct_writes, std::memory_order_relaxed);
  if (!failed.ok()) {
    apply_failure_policy(s.options.commit_failure_policy, "encryption", failed, s.waiters);
    return failed;
  }
  CL_RETURN_IF_ERROR(s.finish_append(last_packed, options.wait));
  return range;
}

namespace {

// Whether `p` lies within what this process has appended: a segment past the
// active one, or an offset past what the active one has reserved, would make
// a wait that never ends or a discard that covers later appends. An append
// returns an offset below used(), which is where the next one goes: a wait
// may name it (everything before it), a discard may not (it would cover that
// next mutation).
Status check_appended(const SegmentChain& chain, std::string_view operation, Position p, bool may_be_next) {
  const EpochPins::Pin pinned = chain.pin();
  const MappedSegment& active = *chain.active();
  const uint64_t end = active.used();
  const bool beyond = p.segment > active.id() ||
                      (p.segment == active.id() && (p.offset > end || (p.offset == end && !may_be_next))) ||
                      p.offset >= (uint64_t{1} << DurableWaiters::kOffsetBits);
  if (!beyond) return {};
  return Status::invalid_argument(std::string(operation) + ": position " + p.to_string() +
                                  " was never appended (the active segment is " + std::to_string(active.id()) +
                                  ", its next append goes at offset " + std::to_string(end) + ")");
}

}  // namespace

Status CommitLog::wait_durable(Position position) {
  Impl& s = *impl_;
  if (position.segment < s.chain.first_id()) return {};
  CL_RETURN_IF_ERROR(check_appended(s.chain, "wait_durable", position, /*may_be_next=*/true));
  return s.wait_durable(DurableWaiters::pack(position.segment - s.chain.first_id(), position.offset));
}

Status CommitLog::sync() {
  Impl& s = *impl_;
  if (s.waiters.failed()) return s.waiters.error();
  const EpochPins::Pin pinned = s.chain.pin();
  MappedSegment* segment = s.chain.active();
  // Every entry reserved so far starts below used(); the flush's sealed tail
  // will be at least used().
  const uint64_t target = DurableWaiters::pack(s.chain.ordinal(*segment), segment->used());
  if (s.waiters.durable(target - 1)) return {};
  // Asked once counted as waiting: a flush that fails from then on is this
  // wait's error (DurableWaiters::wait_durable).
  return s.waiters.wait_durable(target - 1, [&s] { s.sync_thread->request_explicit_flush(); });
}

Status CommitLog::close() {
  Impl& s = *impl_;
  if (s.lifecycle->on_own_thread()) {
    return Status::invalid_argument("close: called from the log's own thread (on_flush_request or the archive "
                                    "hook), which it would wait for; call it from another thread");
  }
  if (!s.closed.exchange(true)) {
    // Everything appended is made durable before the segment is finished, so
    // its end marker records all of it as durable (format.h, version 2).
    sync().ignore();  // a failed log reports its error below
    s.chain.shut();
    s.sync_thread->stop();
    if (s.cdc) s.cdc->stop();
    s.lifecycle->stop();
    s.allocator.stop();
    s.lifecycle->park_empty_last();
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
  if (up_to.segment >= s.chain.first_id()) CL_RETURN_IF_ERROR(check_appended(s.chain, "discard", up_to, /*may_be_next=*/false));
  s.lifecycle->discard(table, up_to);
  return {};
}

const Options& CommitLog::options() const { return impl_->options; }

}  // namespace commitlog
