// SPDX-License-Identifier: Apache-2.0
#include "commitlog/lifecycle/retention/segment_registry.h"

#include <algorithm>
#include <set>

#include "segment/format.h"

namespace commitlog {

SegmentRegistry::SegmentRegistry(const SegmentChain& chain, const SpareSegments* spares, uint64_t capacity,
                                 bool compressed, bool archiving)
    : chain_(chain),
      spares_(spares),
      capacity_(capacity),
      compressed_(compressed),
      archiving_(archiving),
      next_unfinished_(chain.first_id()) {}

bool SegmentRegistry::add_old(std::map<uint64_t, Record> old) {
  uint64_t bytes = 0;
  for (const auto& [id, r] : old) bytes += r.bytes;
  bool any = false;
  {
    std::lock_guard lock(mu_);
    records_ = std::move(old);
    any = !records_.empty();
  }
  retained_.fetch_add(bytes);
  return any;
}

void SegmentRegistry::add_finished(const MappedSegment& segment) {
  Record r;
  r.path = segment.path();
  r.bytes = compressed_ ? format::first_section_offset(segment.flags()) + segment.file_bytes_written() : capacity_;
  r.sized = !compressed_;  // a compressed file is measured on disk later
  r.scanned = true;
  r.tables = segment.tables();
  r.unsealed_end = segment.durable_offset() + format::kMarkerSize;  // past the end marker
  const uint64_t bytes = r.bytes;
  {
    std::lock_guard lock(mu_);
    records_[segment.id()] = std::move(r);
    ++finished_;
  }
  retained_.fetch_add(bytes);
  next_unfinished_.store(segment.id() + 1);
}

void SegmentRegistry::discard(uint32_t table, Position up_to) {
  std::lock_guard lock(mu_);
  auto [it, inserted] = discarded_.try_emplace(table, up_to);
  if (!inserted) it->second = std::max(it->second, up_to);
}

std::vector<SegmentRegistry::Unlearned> SegmentRegistry::unlearned() const {
  std::vector<Unlearned> todo;
  std::lock_guard lock(mu_);
  for (const auto& [id, r] : records_) {
    if (!r.scanned || !r.sized) todo.push_back({{id, r.path}, !r.scanned, !r.sized});
  }
  return todo;
}

void SegmentRegistry::learned(uint64_t id, std::optional<SegmentTables> tables, std::optional<uint64_t> size) {
  std::lock_guard lock(mu_);
  auto it = records_.find(id);
  if (it == records_.end()) return;
  Record& r = it->second;
  if (tables) {
    r.scanned = true;
    r.keep = r.keep || !tables->damage.empty();
    r.tables = std::move(tables->tables);
  }
  if (size) {
    retained_.fetch_add(*size);
    retained_.fetch_sub(r.bytes);
    r.bytes = *size;
  }
  r.sized = true;
}

std::vector<std::pair<SegmentFile, uint64_t>> SegmentRegistry::unsealed() const {
  std::vector<std::pair<SegmentFile, uint64_t>> todo;
  std::lock_guard lock(mu_);
  for (const auto& [id, r] : records_) {
    if (r.unsealed_end != 0) todo.push_back({{id, r.path}, r.unsealed_end});
  }
  return todo;
}

void SegmentRegistry::sealed(uint64_t id) {
  std::lock_guard lock(mu_);
  auto it = records_.find(id);
  if (it != records_.end()) it->second.unsealed_end = 0;
}

std::vector<SegmentFile> SegmentRegistry::unarchived() const {
  std::vector<SegmentFile> todo;
  std::lock_guard lock(mu_);
  for (const auto& [id, r] : records_) {
    if (r.scanned && !r.archived && !r.archive_failed) todo.push_back({id, r.path});
  }
  return todo;
}

void SegmentRegistry::archived(uint64_t id, bool ok) {
  std::lock_guard lock(mu_);
  auto it = records_.find(id);
  if (it == records_.end()) return;
  it->second.archived = ok;
  it->second.archive_failed = !ok;
}

bool SegmentRegistry::dirty_locked(uint64_t id, const TableExtent& extent) const {
  auto it = discarded_.find(extent.table);
  return it == discarded_.end() || it->second < Position{id, extent.last_offset};
}

bool SegmentRegistry::clean_locked(uint64_t id, const Record& record) const {
  for (const TableExtent& e : record.tables) {
    if (dirty_locked(id, e)) return false;
  }
  return true;
}

std::vector<SegmentFile> SegmentRegistry::clean() const {
  const uint64_t active = chain_.active_id();
  std::vector<SegmentFile> due;
  std::lock_guard lock(mu_);
  // Old segments wait for the first discard: until then the embedder may
  // still be replaying them.
  const bool replayed = !discarded_.empty();
  for (const auto& [id, r] : records_) {
    if (id >= active || !r.scanned || r.keep || (archiving_ && !r.archived)) continue;
    if ((id >= chain_.first_id() || replayed) && clean_locked(id, r)) due.push_back({id, r.path});
  }
  return due;
}

void SegmentRegistry::keep(uint64_t id) {
  std::lock_guard lock(mu_);
  if (auto it = records_.find(id); it != records_.end()) it->second.keep = true;
}

void SegmentRegistry::removed(const std::vector<uint64_t>& ids) {
  uint64_t freed = 0;
  {
    std::lock_guard lock(mu_);
    for (uint64_t id : ids) {
      auto it = records_.find(id);
      freed += it->second.bytes;
      records_.erase(it);
    }
  }
  retained_.fetch_sub(freed);
}

void SegmentRegistry::park_last_if_empty(const std::function<bool(const std::string& path, uint64_t id)>& park) {
  std::lock_guard lock(mu_);
  if (records_.empty()) return;
  auto last = std::prev(records_.end());
  const Record& r = last->second;
  if (last->first != chain_.active_id() || !r.tables.empty() || r.keep || (archiving_ && !r.archived)) return;
  if (!park(r.path, last->first)) return;
  retained_.fetch_sub(r.bytes);
  records_.erase(last);
}

SegmentRegistry::DirtyTables SegmentRegistry::dirty_tables(uint64_t excess) const {
  std::set<uint32_t> dirty;
  DirtyTables out;
  std::lock_guard lock(mu_);
  for (const auto& [id, r] : records_) {
    if (excess == 0) break;
    if (r.keep) continue;  // flushing would not free it
    for (const TableExtent& e : r.tables) {
      if (dirty_locked(id, e)) dirty.insert(e.table);
    }
    excess -= std::min(excess, r.bytes);
  }
  out.tables.assign(dirty.begin(), dirty.end());
  out.finished = finished_;
  return out;
}

uint64_t SegmentRegistry::finished() const {
  std::lock_guard lock(mu_);
  return finished_;
}

uint64_t SegmentRegistry::measure(bool active_as_used) const {
  const EpochPins::Pin pinned = chain_.pin();
  const MappedSegment* active = chain_.active();
  const uint64_t next = next_unfinished_.load();
  uint64_t bytes = retained_.load();
  if (next <= active->id()) {
    bytes += (active->id() - next) * capacity_ + (active_as_used ? active->used() : capacity_);
  }
  return bytes;
}

uint64_t SegmentRegistry::total_bytes() const {
  return measure(compressed_) + (spares_ != nullptr ? spares_->bytes() : 0);
}

uint64_t SegmentRegistry::pressure_bytes() const { return measure(true); }

uint64_t SegmentRegistry::segments() const {
  uint64_t segments = 0;
  {
    std::lock_guard lock(mu_);
    segments = records_.size();
  }
  const uint64_t active = chain_.active_id(), next = next_unfinished_.load();
  if (next <= active) segments += active - next + 1;
  return segments;
}

}  // namespace commitlog
