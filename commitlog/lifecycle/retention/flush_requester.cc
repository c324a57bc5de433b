// SPDX-License-Identifier: Apache-2.0
#include "commitlog/lifecycle/retention/flush_requester.h"

#include <utility>
#include <vector>

namespace commitlog {
namespace {

constexpr Duration kFlushRequestRetry = std::chrono::seconds(1);

}  // namespace

FlushRequester::FlushRequester(const Options& options, const SegmentRegistry& registry)
    : clock_(*options.clock),
      registry_(registry),
      soft_limit_(options.total_space != 0 ? options.total_space
                                           : options.total_space_hard_limit - options.total_space_hard_limit / 4),
      on_flush_request_(options.on_flush_request) {}

std::optional<Duration> FlushRequester::request() {
  const uint64_t total = registry_.total_bytes();
  if (soft_limit_ == 0 || total <= soft_limit_) return std::nullopt;
  if (on_flush_request_) ask(total - soft_limit_);
  return kFlushRequestRetry;
}

void FlushRequester::ask(uint64_t excess) {
  const TimePoint now = clock_.now();
  if (registry_.finished() == finished_at_last_request_ && now - last_request_ < kFlushRequestRetry) return;
  SegmentRegistry::DirtyTables dirty = registry_.dirty_tables(excess);
  finished_at_last_request_ = dirty.finished;
  if (dirty.tables.empty()) return;
  last_request_ = now;
  requests_.fetch_add(1);
  on_flush_request_(std::move(dirty.tables));
}

}  // namespace commitlog
