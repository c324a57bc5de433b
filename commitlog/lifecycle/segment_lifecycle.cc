// SPDX-License-Identifier: Apache-2.0
#include "commitlog/lifecycle/segment_lifecycle.h"

#include <algorithm>
#include <optional>
#include <set>

#include "commitlog/lifecycle/access_mode.h"
#include "commitlog/util/report.h"
#include "commitlog/replay/segment_tables.h"
#include "commitlog/util/thread_name.h"
#include "segment/file_name.h"
#include "segment/format.h"
#include "segment/segment_seal.h"

namespace commitlog {
namespace {

constexpr Duration kFlushRequestRetry = std::chrono::seconds(1);

// The lifecycle whose thread this is, if any: read by on_own_thread(),
// which std::thread's id could not serve while stop() joins it.
thread_local const SegmentLifecycle* running_here = nullptr;

}  // namespace

bool SegmentLifecycle::on_own_thread() const { return running_here == this; }

SegmentLifecycle::SegmentLifecycle(const Options& options, ArchiveHook archive, const SegmentChain& chain,
                                   SpareSegments* spares)
    : fs_(*options.file_system),
      clock_(*options.clock),
      dir_(options.directory),
      capacity_(options.segment_size),
      compressed_(writes_sections(options)),
      keys_(options.encryption),
      total_space_(options.total_space),
      hard_limit_(options.total_space_hard_limit),
      archive_(std::move(archive)),
      on_flush_request_(options.on_flush_request),
      chain_(chain),
      spares_(spares),
      throttle_(*options.clock, options.total_space_hard_limit, options.total_space_max_delay,
                [this] { return pressure_bytes(); }),
      next_unfinished_(chain.first_id()),
      clock_moves_(*options.clock, [this] {
        std::lock_guard lock(mu_);
        cv_.notify_all();
      }) {}

SegmentLifecycle::~SegmentLifecycle() { stop(); }

Status SegmentLifecycle::start() {
  auto files = list_segment_files(fs_, dir_);
  if (!files.ok()) return files.status();
  std::map<uint64_t, Record> old;
  uint64_t bytes = 0;
  for (const SegmentFile& file : *files) {
    if (file.id >= chain_.first_id()) continue;  // this process's
    auto f = fs_.open(file.path, OpenMode::kRead);
    if (!f.ok()) return f.status();
    auto size = (*f)->size();
    if (!size.ok()) return size.status();
    Record& r = old[file.id];
    r.path = file.path;
    r.bytes = *size;
    r.sized = true;
    bytes += *size;
  }
  {
    std::lock_guard lock(mu_);
    records_ = std::move(old);
    work_ = !records_.empty();
  }
  retained_.fetch_add(bytes);
  thread_ = std::thread([this] { run(); });
  return {};
}

void SegmentLifecycle::stop() {
  {
    std::lock_guard lock(mu_);
    if (stopped_) return;
    stopped_ = stopping_ = true;
  }
  throttle_.close();
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void SegmentLifecycle::park_empty_last() {
  std::lock_guard lock(mu_);
  if (spares_ == nullptr || !stopped_ || records_.empty()) return;
  auto last = std::prev(records_.end());
  const Record& r = last->second;
  if (last->first != chain_.active_id() || !r.tables.empty() || r.keep || (archive_ && !r.archived)) return;
  if (!spares_->park(r.path, last->first)) return;
  fs_.sync_dir(dir_).ignore();
  retained_.fetch_sub(r.bytes);
  records_.erase(last);
}

void SegmentLifecycle::on_finished(const MappedSegment& segment) {
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
    work_ = true;
  }
  retained_.fetch_add(bytes);
  next_unfinished_.store(segment.id() + 1);
  cv_.notify_one();
}

void SegmentLifecycle::notify_switch() {
  {
    std::lock_guard lock(mu_);
    work_ = true;
  }
  cv_.notify_one();
}

void SegmentLifecycle::discard(uint32_t table, Position up_to) {
  {
    std::lock_guard lock(mu_);
    auto [it, inserted] = discarded_.try_emplace(table, up_to);
    if (!inserted) it->second = std::max(it->second, up_to);
    work_ = true;
  }
  cv_.notify_one();
}

uint64_t SegmentLifecycle::total_bytes() const {
  const EpochPins::Pin pinned = chain_.pin();
  const MappedSegment* active = chain_.active();
  const uint64_t next = next_unfinished_.load();
  uint64_t bytes = retained_.load();
  if (next <= active->id()) {
    bytes += (active->id() - next) * capacity_ + (compressed_ ? active->used() : capacity_);
  }
  return bytes + (spares_ != nullptr ? spares_->bytes() : 0);
}

uint64_t SegmentLifecycle::pressure_bytes() const {
  const EpochPins::Pin pinned = chain_.pin();
  const MappedSegment* active = chain_.active();
  const uint64_t next = next_unfinished_.load();
  uint64_t bytes = retained_.load();
  if (next <= active->id()) bytes += (active->id() - next) * capacity_ + active->used();
  return bytes;
}

uint64_t SegmentLifecycle::soft_limit() const {
  return total_space_ != 0 ? total_space_ : hard_limit_ - hard_limit_ / 4;
}

LifecycleCounters SegmentLifecycle::counters() const {
  LifecycleCounters c;
  c.total_bytes = total_bytes();
  {
    std::lock_guard lock(mu_);
    c.segments = records_.size();
  }
  const uint64_t active = chain_.active_id(), next = next_unfinished_.load();
  if (next <= active) c.segments += active - next + 1;
  c.deleted = deleted_.load();
  c.recycled = recycled_.load();
  c.spares = spares_ != nullptr ? spares_->count() : 0;
  c.archived = archived_.load();
  c.archive_failures = archive_failures_.load();
  c.delete_failures = delete_failures_.load();
  c.flush_requests = flush_requests_.load();
  return c;
}

void SegmentLifecycle::run() {
  name_this_thread("cl-segments");
  running_here = this;
  std::unique_lock lock(mu_);
  while (true) {
    const bool stopping = stopping_;
    work_ = false;
    lock.unlock();
    pass();
    lock.lock();
    if (stopping) return;
    const auto due = [&] { return work_ || stopping_; };
    if (over_soft_limit_) {
      wait_until(clock_, cv_, lock, clock_.now() + kFlushRequestRetry, due);
    } else {
      cv_.wait(lock, due);
    }
  }
}

void SegmentLifecycle::pass() {
  learn();
  seal();
  archive();
  remove_clean();
  request_flushes();
}

void SegmentLifecycle::learn() {
  struct Todo {
    SegmentFile file;
    bool scan, size;
  };
  std::vector<Todo> todo;
  {
    std::lock_guard lock(mu_);
    for (const auto& [id, r] : records_) {
      if (!r.scanned || !r.sized) todo.push_back({{id, r.path}, !r.scanned, !r.sized});
    }
  }
  bool scanned = false;
  for (const Todo& t : todo) {
    SegmentTables tables;
    if (t.scan) {
      scanned = true;
      auto read = read_segment_tables(fs_, t.file, &buffer_, keys_.get());
      if (read.ok()) {
        tables = std::move(read).value();
      } else {
        tables.damage = read.status().to_string();
      }
      if (!tables.damage.empty()) {
        report(t.file.path + ": " + tables.damage + "; the log keeps this segment and never deletes it");
      }
    }
    std::optional<uint64_t> size;
    if (t.size) {
      auto f = fs_.open(t.file.path, OpenMode::kRead);
      if (f.ok()) {
        auto s = (*f)->size();
        if (s.ok()) size = *s;
      }
    }
    std::lock_guard lock(mu_);
    auto it = records_.find(t.file.id);
    if (it == records_.end()) continue;
    Record& r = it->second;
    if (t.scan) {
      r.scanned = true;
      r.keep = r.keep || !tables.damage.empty();
      r.tables = std::move(tables.tables);
    }
    if (size) {
      retained_.fetch_add(*size);
      retained_.fetch_sub(r.bytes);
      r.bytes = *size;
    }
    r.sized = true;
  }
  if (scanned) buffer_ = {};  // old segments are read once; do not hold a segment's worth of memory
}

void SegmentLifecycle::seal() {
  std::vector<std::pair<SegmentFile, uint64_t>> todo;
  {
    std::lock_guard lock(mu_);
    for (const auto& [id, r] : records_) {
      if (r.unsealed_end != 0) todo.push_back({{id, r.path}, r.unsealed_end});
    }
  }
  for (const auto& [file, end] : todo) {
    const Status sealed = write_seal(fs_, file.path, file.id, end);
    if (!sealed.ok()) report("sealing " + file.path + " failed: " + sealed.to_string() + "; its tail stays unproved");
    std::lock_guard lock(mu_);
    auto it = records_.find(file.id);
    if (it != records_.end()) it->second.unsealed_end = 0;
  }
}

void SegmentLifecycle::archive() {
  if (!archive_) return;
  std::vector<SegmentFile> todo;
  {
    std::lock_guard lock(mu_);
    for (const auto& [id, r] : records_) {
      if (r.scanned && !r.archived && !r.archive_failed) todo.push_back({id, r.path});
    }
  }
  for (const SegmentFile& file : todo) {
    const Status archived = archive_(file.path, base_name(file.path));
    if (!archived.ok()) {
      report("archiving " + file.path + " failed: " + archived.to_string() + "; the segment is kept");
    }
    (archived.ok() ? archived_ : archive_failures_).fetch_add(1);
    std::lock_guard lock(mu_);
    auto it = records_.find(file.id);
    if (it == records_.end()) continue;
    it->second.archived = archived.ok();
    it->second.archive_failed = !archived.ok();
  }
}

bool SegmentLifecycle::clean_locked(uint64_t id, const Record& record) const {
  for (const TableExtent& e : record.tables) {
    auto it = discarded_.find(e.table);
    if (it == discarded_.end() || it->second < Position{id, e.last_offset}) return false;
  }
  return true;
}

void SegmentLifecycle::remove_clean() {
  const uint64_t active = chain_.active_id();
  std::vector<SegmentFile> due;
  {
    std::lock_guard lock(mu_);
    // Old segments wait for the first discard: until then the embedder may
    // still be replaying them.
    const bool replayed = !discarded_.empty();
    for (const auto& [id, r] : records_) {
      if (id >= active || !r.scanned || r.keep || (archive_ && !r.archived)) continue;
      if ((id >= chain_.first_id() || replayed) && clean_locked(id, r)) due.push_back({id, r.path});
    }
  }
  std::vector<uint64_t> removed;
  uint64_t recycled = 0;
  for (const SegmentFile& file : due) {
    if (recycle(file.id, file.path)) {
      removed.push_back(file.id);
      ++recycled;
      continue;
    }
    const Status status = fs_.remove(file.path);
    if (status.ok() || !fs_.exists(file.path)) {
      removed.push_back(file.id);
      continue;
    }
    report("deleting " + file.path + " failed: " + status.to_string() + "; the segment is kept");
    delete_failures_.fetch_add(1);
    std::lock_guard lock(mu_);
    if (auto it = records_.find(file.id); it != records_.end()) it->second.keep = true;
  }
  if (removed.empty()) return;
  if (Status synced = fs_.sync_dir(dir_); !synced.ok()) {
    report("syncing " + dir_ + " after deleting segments failed: " + synced.to_string());
  }
  uint64_t freed = 0;
  {
    std::lock_guard lock(mu_);
    for (uint64_t id : removed) {
      auto it = records_.find(id);
      freed += it->second.bytes;
      records_.erase(it);
    }
  }
  retained_.fetch_sub(freed);
  deleted_.fetch_add(removed.size() - recycled);
  recycled_.fetch_add(recycled);
  throttle_.release();
}

// Only segments of this process: their size is the configured one.
bool SegmentLifecycle::recycle(uint64_t id, const std::string& path) {
  if (spares_ == nullptr || compressed_ || id < chain_.first_id()) return false;
  return (soft_limit() == 0 || total_bytes() <= soft_limit()) && spares_->offer(path, id);
}

void SegmentLifecycle::request_flushes() {
  const uint64_t soft = soft_limit();
  const uint64_t total = total_bytes();
  over_soft_limit_ = soft != 0 && total > soft;
  if (!over_soft_limit_ || !on_flush_request_) return;
  const TimePoint now = clock_.now();
  std::vector<uint32_t> tables;
  {
    std::lock_guard lock(mu_);
    if (finished_ == finished_at_last_request_ && now - last_request_ < kFlushRequestRetry) return;
    std::set<uint32_t> dirty;
    uint64_t excess = total - soft;
    for (const auto& [id, r] : records_) {
      if (excess == 0) break;
      if (r.keep) continue;  // flushing would not free it
      for (const TableExtent& e : r.tables) {
        auto it = discarded_.find(e.table);
        if (it == discarded_.end() || it->second < Position{id, e.last_offset}) dirty.insert(e.table);
      }
      excess -= std::min(excess, r.bytes);
    }
    tables.assign(dirty.begin(), dirty.end());
    finished_at_last_request_ = finished_;
  }
  if (tables.empty()) return;
  last_request_ = now;
  flush_requests_.fetch_add(1);
  on_flush_request_(std::move(tables));
}

}  // namespace commitlog
