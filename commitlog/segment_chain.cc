// SPDX-License-Identifier: Apache-2.0
#include "commitlog/segment_chain.h"

namespace commitlog {

SegmentChain::SegmentChain(SegmentAllocator& allocator, std::function<void()> on_switch,
                           std::function<void(MappedSegment&)> on_retired)
    : allocator_(allocator),
      on_switch_(std::move(on_switch)),
      on_retired_(std::move(on_retired)),
      first_id_(allocator.first_id()) {}

Status SegmentChain::start() {
  auto first = allocator_.take();
  if (!first.ok()) return first.status();
  std::lock_guard lock(mu_);
  segments_.push_back(std::move(first).value());
  active_.store(segments_.back().get(), std::memory_order_release);
  return {};
}

Result<MappedSegment*> SegmentChain::advance(MappedSegment* full) {
  // Waiting for the allocator happens under switch_mu_ only: the sync thread,
  // which may have to finish `full` (and free its compression buffer) before
  // the allocator can go on, takes mu_ and must never wait for this.
  std::lock_guard switching(switch_mu_);
  {
    std::lock_guard lock(mu_);
    if (shut_) return Status::closed("the commit log is closed");
    MappedSegment* current = active_.load(std::memory_order_acquire);
    if (current != full) return current;  // another producer switched already
    full->close();
  }
  on_switch_();
  auto next = allocator_.take();
  if (!next.ok()) return next.status();
  std::lock_guard lock(mu_);
  if (shut_) return Status::closed("the commit log is closed");
  segments_.push_back(std::move(next).value());
  active_.store(segments_.back().get(), std::memory_order_release);
  switches_.fetch_add(1, std::memory_order_relaxed);
  return segments_.back().get();
}

void SegmentChain::shut() {
  std::lock_guard lock(mu_);
  shut_ = true;
  if (MappedSegment* current = active_.load()) current->close();
}

std::vector<MappedSegment*> SegmentChain::unfinished() const {
  std::lock_guard lock(mu_);
  std::vector<MappedSegment*> out;
  for (size_t i = first_unfinished_; i < segments_.size(); ++i) out.push_back(segments_[i].get());
  return out;
}

void SegmentChain::retire_finished() {
  std::vector<MappedSegment*> retired;
  {
    std::lock_guard lock(mu_);
    while (first_unfinished_ < segments_.size() && segments_[first_unfinished_]->finished()) {
      segments_[first_unfinished_]->release_file();
      retired.push_back(segments_[first_unfinished_].get());
      ++first_unfinished_;
    }
  }
  if (on_retired_) {
    for (MappedSegment* segment : retired) on_retired_(*segment);
  }
}

}  // namespace commitlog
