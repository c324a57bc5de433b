// SPDX-License-Identifier: Apache-2.0
#include "segment/byte_scan.h"

#include <algorithm>
#include <cstring>

#include "segment/format.h"

namespace commitlog {
namespace {

// Word at a time: the zero tail of a preallocated segment can be most of it.
uint64_t load_word(const std::byte* p) {
  uint64_t w;
  std::memcpy(&w, p, sizeof w);
  return w;
}

}  // namespace

uint64_t next_nonzero(std::span<const std::byte> bytes, uint64_t from) {
  const uint64_t size = bytes.size();
  uint64_t at = from;
  while (at < size && at % 8 != 0 && bytes[at] == std::byte{0}) ++at;
  while (at + 8 <= size && load_word(bytes.data() + at) == 0) at += 8;
  while (at < size && bytes[at] == std::byte{0}) ++at;
  return std::min(at, size);
}

uint64_t nonzero_end(std::span<const std::byte> bytes, uint64_t from) {
  uint64_t end = bytes.size();
  while (end > from && end % 8 != 0 && bytes[end - 1] == std::byte{0}) --end;
  while (end >= from + 8 && load_word(bytes.data() + end - 8) == 0) end -= 8;
  while (end > from && bytes[end - 1] == std::byte{0}) --end;
  return std::max(end, from);
}

uint64_t find_forward(std::span<const std::byte> bytes, uint64_t from, uint64_t size,
                      const std::function<bool(uint64_t)>& probe) {
  uint64_t at = format::align_up(from);
  uint64_t nonzero = 0;  // the first non-zero byte at or after `at`, once looked up
  bool known = false;
  while (at + size <= bytes.size()) {
    if (!known || nonzero < at) {
      nonzero = next_nonzero(bytes, at);
      known = true;
    }
    if (nonzero >= at + size) {
      // [at, at + size) is zero: jump to the first offset whose structure
      // would include the non-zero byte.
      if (nonzero == bytes.size()) return UINT64_MAX;
      at = std::max(at + format::kAlignment, format::align_up(nonzero + 1 - size));
      continue;
    }
    if (probe(at)) return at;
    at += format::kAlignment;
  }
  return UINT64_MAX;
}

}  // namespace commitlog
