// SPDX-License-Identifier: Apache-2.0
// How far ahead of its producers a segment's image is prepared
// (SegmentStorage::prepare): the sync thread asks after each seal or flush,
// and gets a range to prepare, or nothing while enough is prepared.
//
// Thread-safety: the thread that runs the log's round only.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>

namespace commitlog {

class PrepareAhead {
 public:
  using Range = std::pair<uint64_t, uint64_t>;  // [first, second) of the image

  // For an image of `capacity` bytes; first() is what to prepare at once.
  explicit PrepareAhead(uint64_t capacity);
  Range first() const { return {0, prepared_to_}; }
  // The producers have reserved up to `frontier`: the pages after it, for
  // four times what they reserved since the previous call (at least 64 KiB,
  // at most 4 MiB), once less than half of that is left prepared.
  std::optional<Range> next(uint64_t frontier);

 private:
  const uint64_t capacity_;
  uint64_t prepared_at_used_ = 0;  // the frontier at the last call
  uint64_t prepared_to_;           // the image is prepared up to here
};

}  // namespace commitlog
