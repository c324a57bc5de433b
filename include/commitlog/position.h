// SPDX-License-Identifier: Apache-2.0
// Public API. A place in the log: the segment id and the offset of an entry's first byte.
// Positions are totally ordered: by segment id, then offset. An entry is
// durable once the log's durable position is greater than its position.
#pragma once

// One clear message instead of a page of errors from C++20 library features.
#if __cplusplus < 202002L
#error "commitlog needs C++20: compile with -std=c++20 or later"
#else

#include <compare>
#include <cstdint>
#include <string>

#include "commitlog/export.h"

namespace commitlog {

struct COMMITLOG_EXPORT Position {
  uint64_t segment = 0;
  uint64_t offset = 0;

  auto operator<=>(const Position&) const = default;
  std::string to_string() const { return std::to_string(segment) + ":" + std::to_string(offset); }
};

}  // namespace commitlog

#endif  // C++20
