// SPDX-License-Identifier: Apache-2.0
// The library's test points (commitlog/util/test_points.h), followed for the
// whole test process from its start.
#pragma once

#include <string_view>

namespace commitlog::testing {

// Waits, for up to 5 s, until the last point `loop` ("sync loop",
// "allocator") reached is "<loop>: asleep". Returns whether that came. With
// several logs open it follows whichever thread of that loop reached a
// point last.
bool await_asleep(std::string_view loop);
// The same for "<loop>: awake": the loop was woken (or its time came) and
// has not gone back to sleep.
bool await_awake(std::string_view loop);

}  // namespace commitlog::testing
