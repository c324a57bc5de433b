// SPDX-License-Identifier: Apache-2.0
#include "commitlog/lifecycle/segment_allocator.h"

#include <algorithm>

#include "commitlog/util/test_points.h"
#include "commitlog/util/thread_name.h"
#include "segment/file_name.h"

namespace commitlog {
Result<uint64_t> next_segment_id(FileSystem& fs, const Clock& clock, const std::string& dir) {
  auto names = fs.list(dir);
  if (!names.ok()) return names.status();
  uint64_t next = clock.wall_micros() / 1000;
  for (const auto& name : *names) {
    auto id = parse_segment_file_name(name);
    if (!id.ok()) return Status::invalid_argument(dir + "/" + id.status().message());
    if (*id) next = std::max(next, **id + 1);
    if (auto spare = parse_spare_file_name(name)) next = std::max(next, *spare + 1);
  }
  return next;
}

SegmentAllocator::SegmentAllocator(FileSystem& fs, const Clock& clock, std::string dir,
                                   SegmentFileInfo shape, uint64_t first_id, BufferPool* pool,
                                   StorageMode mode, SpareSegments* spares)
    : fs_(fs),
      clock_(clock),
      dir_(std::move(dir)),
      shape_(shape),
      first_id_(first_id),
      pool_(pool),
      mode_(mode),
      spares_(spares),
      next_id_(first_id),
      thread_([this] { run(); }) {}

SegmentAllocator::~SegmentAllocator() { stop(); }

void SegmentAllocator::stop() {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    stopping_ = true;
    if (error_.ok()) error_ = Status::closed("the segment allocator is stopped");
  }
  if (pool_ != nullptr) pool_->shut();
  work_cv_.notify_all();
  ready_cv_.notify_all();
  thread_.join();
  if (ready_) {
    std::string path = ready_->path();
    const uint64_t id = ready_->id();
    ready_.reset();
    // An unused segment holds no data; leaving it would only cost space.
    if (spares_ == nullptr || !spares_->offer(path, id)) fs_.remove(path).ignore();
    fs_.sync_dir(dir_).ignore();
  }
}

void SegmentAllocator::fail(const Status& error) {
  {
    std::lock_guard lock(mu_);
    if (error_.ok()) error_ = error;
  }
  if (pool_ != nullptr) pool_->shut();
  work_cv_.notify_all();
  ready_cv_.notify_all();
}

void SegmentAllocator::run() {
  name_this_thread("cl-allocator");
  std::unique_lock lock(mu_);
  while (true) {
    while (!stopping_ && (ready_ || !error_.ok())) {
      reach_test_point("allocator: asleep");
      work_cv_.wait(lock);
      reach_test_point("allocator: awake");
    }
    if (stopping_) return;
    const uint64_t id = next_id_;
    SegmentFileInfo info = shape_;
    info.id = id;
    info.previous_id = id == first_id_ ? 0 : id - 1;
    lock.unlock();
    auto segment = make(info);
    lock.lock();
    if (segment.ok()) {
      ready_ = std::move(segment).value();
      ++next_id_;
    } else if (error_.ok()) {
      error_ = segment.status();
    }
    ready_cv_.notify_all();
  }
}

Result<std::unique_ptr<MappedSegment>> SegmentAllocator::make(const SegmentFileInfo& info) {
  if (auto spare = spares_ != nullptr ? spares_->take() : std::nullopt) {
    auto reused = MappedSegment::create(fs_, clock_, dir_, info, pool_, mode_, *spare);
    if (reused.ok() || reused.status().code() == ErrorCode::kClosed) return reused;
    // A spare that cannot be reused (its size changed, say) is only space:
    // a new file serves instead.
    fs_.remove(*spare).ignore();
  }
  return MappedSegment::create(fs_, clock_, dir_, info, pool_, mode_);
}

Result<std::unique_ptr<MappedSegment>> SegmentAllocator::take() {
  std::unique_lock lock(mu_);
  if (!ready_ && error_.ok()) {
    ++waits_;
    ready_cv_.wait(lock, [&] { return ready_ != nullptr || !error_.ok(); });
  }
  if (!error_.ok()) return error_;
  auto segment = std::move(ready_);
  work_cv_.notify_all();
  return segment;
}

uint64_t SegmentAllocator::waits() const {
  std::lock_guard lock(mu_);
  return waits_;
}

}  // namespace commitlog
