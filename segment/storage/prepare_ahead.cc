// SPDX-License-Identifier: Apache-2.0
#include "segment/storage/prepare_ahead.h"

#include <algorithm>

namespace commitlog {
namespace {

constexpr uint64_t kFirstPrepared = 256 << 10;
constexpr uint64_t kMinPrepared = 64 << 10;
constexpr uint64_t kMaxPrepared = 4 << 20;

}  // namespace

PrepareAhead::PrepareAhead(uint64_t capacity)
    : capacity_(capacity), prepared_to_(std::min(kFirstPrepared, capacity) / kMinPrepared * kMinPrepared) {}

// A producer that takes a page fault between reserving an entry and
// publishing it holds up seal(), which waits for that entry. With a mapped
// segment, every first write to a page faults (MAP_POPULATE maps shared pages
// read-only), and with many producers on few CPUs the faults contend for the
// page-table lock with msync's write-protection while the sync thread waits.
// Preparing the pages ahead on the sync thread, after its waiters are woken,
// takes those faults off the producers' path. The page producers write now is
// left alone: preparing it would race with them for its lock. Four times the
// recent growth, renewed once half of it is used, keeps ahead of the
// producers with one madvise per few flushes (one producer: per 256 appends
// of 100 B); the bounds keep the work per call small.
std::optional<PrepareAhead::Range> PrepareAhead::next(uint64_t frontier) {
  const uint64_t grown = frontier - std::min(frontier, prepared_at_used_);
  prepared_at_used_ = frontier;
  const uint64_t ahead = std::clamp<uint64_t>(4 * grown, kMinPrepared, kMaxPrepared);
  if (prepared_to_ >= frontier + ahead / 2) return std::nullopt;
  const uint64_t from = std::max(frontier, prepared_to_);
  // Up to a whole multiple of kMinPrepared (of any page size up to 64 KiB),
  // so that no page straddles two calls and is left out of both.
  const uint64_t to = std::min((frontier + ahead + kMinPrepared - 1) / kMinPrepared * kMinPrepared, capacity_);
  if (to <= from) return std::nullopt;
  prepared_to_ = to;
  return Range{from, to};
}

}  // namespace commitlog
