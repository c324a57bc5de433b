// SPDX-License-Identifier: Apache-2.0
// Gives back the space of the segments due for deletion (segment_registry.h):
// each is deleted -- its file removed, then the directory synced -- or
// recycled. A removal that fails is reported and counted, and the segment is
// kept from then on.
//
// Recycling. A segment this process wrote that would be deleted becomes a
// spare instead (lifecycle/spare_segments.h) while the pool takes it and the files
// stay within the soft limit. At close, the last segment, when it holds no
// entry, is parked as a spare (park_empty_last()): an idle open and close
// leaves no segment behind.
//
// Thread-safety: remove_clean() is the lifecycle thread's, park_empty_last()
// the closing thread's once that thread has stopped; the counters any
// thread's.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "commitlog/lifecycle/retention/segment_registry.h"
#include "commitlog/lifecycle/space_throttle.h"
#include "commitlog/options.h"

namespace commitlog {

class SegmentReclaimer {
 public:
  // `chain`, `registry`, `throttle` and `spares` (may be null: no recycling)
  // must outlive this object. `soft_limit`: 0 for none.
  SegmentReclaimer(const Options& options, const SegmentChain& chain, SpareSegments* spares,
                   SegmentRegistry& registry, SpaceThrottle& throttle, uint64_t soft_limit);

  // Deletes or recycles every segment due, then lets waiting producers check
  // the space again.
  void remove_clean();
  // Once the lifecycle thread and the allocator have stopped (so no segment
  // after it is left to name it as previous): the last segment, if it holds
  // no entry, becomes a spare.
  void park_empty_last();

  uint64_t deleted() const { return deleted_.load(); }
  uint64_t recycled() const { return recycled_.load(); }  // segments made spares instead
  uint64_t delete_failures() const { return delete_failures_.load(); }
  uint64_t spares() const;  // spare files kept now

 private:
  bool recycle(uint64_t id, const std::string& path);

  FileSystem& fs_;
  const std::string dir_;
  const bool compressed_;
  const uint64_t soft_limit_;
  const SegmentChain& chain_;
  SpareSegments* const spares_;
  SegmentRegistry& registry_;
  SpaceThrottle& throttle_;
  std::atomic<uint64_t> deleted_{0}, recycled_{0}, delete_failures_{0};
};

}  // namespace commitlog
