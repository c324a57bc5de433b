// SPDX-License-Identifier: Apache-2.0
// Named points in the library's own threads that a test can follow, so that
// it waits for "the sync loop is asleep" instead of reading /proc or
// sleeping (Kudu's and RocksDB's sync points, reduced to one observer).
//
// The library calls reach_test_point() where a test may care; with no
// observer set that is one relaxed load. The points:
//   "sync loop: asleep", "sync loop: awake"   around each sleep of the sync
//                                             thread, with its round let go
//   "allocator: asleep", "allocator: awake"   around the allocator thread's
//                                             wait for work
//
// Thread-safety: any thread. The observer runs on the thread that reached
// the point, under a lock shared by all points: it must be quick and must
// not reach a point itself.
#pragma once

#include <functional>
#include <string_view>

namespace commitlog {

using TestPointObserver = std::function<void(std::string_view point)>;

// Replaces the process's observer; an empty one removes it.
void set_test_point_observer(TestPointObserver observer);
void reach_test_point(std::string_view point);

}  // namespace commitlog
