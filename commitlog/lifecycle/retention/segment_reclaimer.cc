// SPDX-License-Identifier: Apache-2.0
#include "commitlog/lifecycle/retention/segment_reclaimer.h"

#include <vector>

#include "commitlog/lifecycle/access_mode.h"
#include "commitlog/util/report.h"

namespace commitlog {

SegmentReclaimer::SegmentReclaimer(const Options& options, const SegmentChain& chain, SpareSegments* spares,
                                   SegmentRegistry& registry, SpaceThrottle& throttle, uint64_t soft_limit)
    : fs_(*options.file_system),
      dir_(options.directory),
      compressed_(writes_sections(options)),
      soft_limit_(soft_limit),
      chain_(chain),
      spares_(spares),
      registry_(registry),
      throttle_(throttle) {}

void SegmentReclaimer::remove_clean() {
  std::vector<uint64_t> removed;
  uint64_t recycled = 0;
  for (const SegmentFile& file : registry_.clean()) {
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
    registry_.keep(file.id);
  }
  if (removed.empty()) return;
  if (Status synced = fs_.sync_dir(dir_); !synced.ok()) {
    report("syncing " + dir_ + " after deleting segments failed: " + synced.to_string());
  }
  registry_.removed(removed);
  deleted_.fetch_add(removed.size() - recycled);
  recycled_.fetch_add(recycled);
  throttle_.release();
}

// Only segments of this process: their size is the configured one.
bool SegmentReclaimer::recycle(uint64_t id, const std::string& path) {
  if (spares_ == nullptr || compressed_ || id < chain_.first_id()) return false;
  return (soft_limit_ == 0 || registry_.total_bytes() <= soft_limit_) && spares_->offer(path, id);
}

void SegmentReclaimer::park_empty_last() {
  if (spares_ == nullptr) return;
  registry_.park_last_if_empty([this](const std::string& path, uint64_t id) {
    if (!spares_->park(path, id)) return false;
    fs_.sync_dir(dir_).ignore();
    return true;
  });
}

uint64_t SegmentReclaimer::spares() const { return spares_ != nullptr ? spares_->count() : 0; }

}  // namespace commitlog
