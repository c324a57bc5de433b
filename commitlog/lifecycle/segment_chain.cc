// SPDX-License-Identifier: Apache-2.0
#include "commitlog/lifecycle/segment_chain.h"

#include <utility>

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
  MutexLock lock(mu_);
  unfinished_.push_back(std::move(first).value());
  active_.store(unfinished_.back().get(), std::memory_order_seq_cst);
  return {};
}

Result<MappedSegment*> SegmentChain::advance(MappedSegment* full) {
  // Waiting for the allocator happens under switch_mu_ only: the sync thread,
  // which may have to finish `full` (and free its compression buffer) before
  // the allocator can go on, takes mu_ and must never wait for this.
  std::lock_guard switching(switch_mu_);
  {
    MutexLock lock(mu_);
    if (shut_) return Status::closed("the commit log is closed");
    MappedSegment* current = active_.load(std::memory_order_acquire);
    if (current != full) return current;  // another producer switched already
    full->close();
  }
  on_switch_();
  auto next = allocator_.take();
  if (!next.ok()) return next.status();
  MutexLock lock(mu_);
  if (shut_) return Status::closed("the commit log is closed");
  unfinished_.push_back(std::move(next).value());
  active_.store(unfinished_.back().get(), std::memory_order_seq_cst);
  switches_.fetch_add(1, std::memory_order_relaxed);
  return unfinished_.back().get();
}

void SegmentChain::shut() {
  MutexLock lock(mu_);
  shut_ = true;
  if (MappedSegment* current = active_.load()) current->close();
}

std::vector<MappedSegment*> SegmentChain::unfinished() const {
  MutexLock lock(mu_);
  std::vector<MappedSegment*> out;
  for (const auto& segment : unfinished_) out.push_back(segment.get());
  return out;
}

void SegmentChain::retire_finished() {
  const size_t before = retired_.size();
  {
    MutexLock lock(mu_);
    while (!unfinished_.empty() && unfinished_.front()->finished()) {
      unfinished_.front()->release_file();
      retired_.push_back(std::move(unfinished_.front()));
      unfinished_.pop_front();
    }
  }
  if (on_retired_) {
    for (size_t i = before; i < retired_.size(); ++i) on_retired_(*retired_[i]);
  }
}

// A finished segment may still be active(): its successor is published only
// once the allocator has it. It is kept until then; no pin can reach it
// again after that, as active() only moves forward.
void SegmentChain::reclaim() {
  if (!draining_.empty() && pins_.grace_over(draining_bank_)) draining_.clear();
  if (!draining_.empty() || retired_.empty()) return;
  const MappedSegment* current = active();
  const bool keep_last = retired_.back().get() == current;
  std::unique_ptr<MappedSegment> kept = keep_last ? std::move(retired_.back()) : nullptr;
  if (keep_last) retired_.pop_back();
  draining_ = std::exchange(retired_, {});
  if (kept) retired_.push_back(std::move(kept));
  if (draining_.empty()) return;
  draining_bank_ = pins_.begin_grace();
  if (pins_.grace_over(draining_bank_)) draining_.clear();
}

}  // namespace commitlog
