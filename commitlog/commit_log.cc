#include "commitlog/commit_log.h"

#include <chrono>

#include "commitlog/durable_waiters.h"
#include "commitlog/failure_policy.h"
#include "commitlog/segment_allocator.h"
#include "commitlog/segment_chain.h"
#include "commitlog/sync_thread.h"
#include "segment/format.h"

namespace commitlog {
namespace {

uint64_t wall_clock_us() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count());
}

}  // namespace

// Members are declared in dependency order, so they are destroyed sync
// thread first, allocator last.
struct CommitLog::Impl {
  Impl(const Options& o, std::unique_ptr<SyncPolicy> p, uint64_t first_id)
      : options(o),
        policy(std::move(p)),
        compression_buffers(o.segment_size, o.max_compression_buffers_in_pool),
        allocator(*o.file_system, o.directory, o.segment_size,
                  o.compression == Compression::kLz4 ? format::kFlagLz4Sections : 0, first_id,
                  &compression_buffers),
        chain(allocator, [this] { sync_thread->notify_switch(); }) {}

  Status wait_packed(uint64_t packed) {
    if (waiters.durable(packed)) return {};
    sync_thread->notify_waiter();
    return waiters.wait_durable(packed);
  }

  Status apply_policy(uint64_t packed) {
    ProducerView view{SteadyClock::now(), waiters.last_flush_started()};
    switch (policy->after_append(view)) {
      case ProducerAction::kReturn:
        return {};
      case ProducerAction::kWaitDurable:
        return wait_packed(packed);
      case ProducerAction::kRequestSyncAndWait:
        sync_thread->request_sync();
        return wait_packed(packed);
      case ProducerAction::kWaitForSyncToCatchUp:
        do {
          CL_RETURN_IF_ERROR(waiters.wait_flush_started_after(view.last_flush_started));
          view = {SteadyClock::now(), waiters.last_flush_started()};
        } while (policy->after_append(view) == ProducerAction::kWaitForSyncToCatchUp);
        return {};
    }
    return {};
  }

  Options options;
  std::unique_ptr<SyncPolicy> policy;
  BufferPool compression_buffers;  // allocates nothing until a compressed segment asks
  SegmentAllocator allocator;
  DurableWaiters waiters;
  SegmentChain chain;
  std::unique_ptr<SyncThread> sync_thread;
  std::atomic<bool> closed{false};
  uint64_t initial_allocation_waits = 0;  // taking the first segment is not a stall
};

Result<std::unique_ptr<CommitLog>> CommitLog::open(const Options& options) {
  FileSystem& fs = *options.file_system;
  if (options.segment_size > (uint64_t{1} << DurableWaiters::kOffsetBits) ||
      options.segment_size % format::kAlignment != 0 ||
      options.segment_size < format::kFirstEntryOffset + 2 * format::kMarkerSize + 64) {
    return Status::invalid_argument("commitlog_segment_size " + std::to_string(options.segment_size) +
                                    " must be a multiple of 8 between 160 bytes and 1 TiB");
  }
  if (options.compression == Compression::kLz4 && options.segment_size > UINT32_MAX) {
    return Status::invalid_argument("commitlog_segment_size must be below 4GiB with commitlog_compression");
  }
  const uint64_t room = options.segment_size - format::kFirstEntryOffset - 2 * format::kMarkerSize;
  if (options.effective_max_mutation_size() == 0 ||
      format::entry_footprint(options.effective_max_mutation_size()) > room) {
    return Status::invalid_argument(
        "max_mutation_size " + std::to_string(options.effective_max_mutation_size()) +
        " does not fit in a segment of " + std::to_string(options.segment_size) + " bytes");
  }
  CL_RETURN_IF_ERROR(fs.create_dirs(options.directory));
  auto policy = PolicyRegistry::global().create(options.sync_policy, options.policy);
  if (!policy.ok()) return policy.status();
  auto first_id = next_segment_id(fs, options.directory);
  if (!first_id.ok()) return first_id.status();

  auto impl = std::make_unique<Impl>(options, std::move(policy).value(), *first_id);
  CL_RETURN_IF_ERROR(impl->chain.start());
  impl->initial_allocation_waits = impl->allocator.waits();
  impl->sync_thread = std::make_unique<SyncThread>(impl->chain, impl->waiters, *impl->policy,
                                                   options.commit_failure_policy);
  return std::unique_ptr<CommitLog>(new CommitLog(std::move(impl)));
}

CommitLog::CommitLog(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

CommitLog::~CommitLog() { close().ignore(); }

Result<Position> CommitLog::append(uint32_t table, std::span<const std::byte> payload) {
  const Mutation mutation{table, payload};
  auto range = append_batch({&mutation, 1});
  if (!range.ok()) return range.status();
  return range->first;
}

Result<AppendedRange> CommitLog::append_batch(std::span<const Mutation> mutations) {
  Impl& s = *impl_;
  if (mutations.empty()) return Status::invalid_argument("append_batch: no mutations");
  const uint64_t limit = s.options.effective_max_mutation_size();
  for (size_t i = 0; i < mutations.size(); ++i) {
    if (mutations[i].payload.size() > limit) {
      return Status::invalid_argument(
          "mutation" + (mutations.size() > 1 ? " " + std::to_string(i) + " of the batch" : std::string()) +
          ": payload of " + std::to_string(mutations[i].payload.size()) +
          " bytes exceeds max_mutation_size of " + std::to_string(limit) + " bytes");
    }
  }
  if (s.closed.load(std::memory_order_acquire)) return Status::closed("the commit log is closed");
  if (s.waiters.failed()) return s.waiters.error();

  const uint64_t time_us = wall_clock_us();
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
      auto next = s.chain.advance(segment);
      if (!next.ok()) {
        if (next.status().code() != ErrorCode::kClosed) {
          apply_failure_policy(s.options.commit_failure_policy, "segment allocation", next.status(), s.waiters);
        }
        return next.status();
      }
      segment = *next;
    }
    for (size_t i = begin; i < end; ++i) {
      segment->write_entry(*offset, mutations[i].table, time_us, mutations[i].payload);
      const Position position{segment->id(), *offset};
      if (i == 0) range.first = position;
      range.last = position;
      *offset += format::entry_footprint(mutations[i].payload.size());
    }
    last_packed = DurableWaiters::pack(s.chain.ordinal(*segment), range.last.offset);
    begin = end;
  }
  CL_RETURN_IF_ERROR(s.apply_policy(last_packed));
  return range;
}

Status CommitLog::wait_durable(Position position) {
  Impl& s = *impl_;
  if (position.segment < s.chain.first_id()) return {};
  if (position.segment > s.chain.active()->id()) {
    return Status::invalid_argument("wait_durable: position " + position.to_string() +
                                    " was never appended");
  }
  return s.wait_packed(DurableWaiters::pack(position.segment - s.chain.first_id(), position.offset));
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
    s.chain.shut();
    s.sync_thread->stop();
    s.allocator.stop();
  }
  return s.waiters.error();
}

CommitLogStats CommitLog::stats() const {
  const Impl& s = *impl_;
  const SyncCounters& c = s.sync_thread->counters();
  CommitLogStats out;
  out.flushes = c.flushes.load();
  out.seals = c.seals.load();
  out.flushed_mutations = c.flushed_entries.load();
  out.flush_nanos = c.flush_nanos.load();
  out.segment_switches = s.chain.switches();
  out.allocation_waits = s.allocator.waits() - s.initial_allocation_waits;
  out.producers_waiting = s.waiters.waiting();
  const uint64_t packed = s.waiters.durable_packed();
  out.durable = {s.chain.first_id() + (packed >> DurableWaiters::kOffsetBits),
                 packed & ((uint64_t{1} << DurableWaiters::kOffsetBits) - 1)};
  return out;
}

const Options& CommitLog::options() const { return impl_->options; }

}  // namespace commitlog
