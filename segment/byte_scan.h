// SPDX-License-Identifier: Apache-2.0
// Scans over raw segment bytes that the readers share: where the non-zero
// bytes are, and a forward search for a structure that can sit at any
// 8-byte-aligned offset. They run only after damage or at the end of a
// segment's data, never over the sealed data of a clean segment.
#pragma once

#include <cstdint>
#include <functional>
#include <span>

namespace commitlog {

// The offset of the first non-zero byte at or after `from`, or bytes.size().
uint64_t next_nonzero(std::span<const std::byte> bytes, uint64_t from);
// One past the last non-zero byte at or after `from`, or `from` when there is none.
uint64_t nonzero_end(std::span<const std::byte> bytes, uint64_t from);

// Calls `probe(at)` for each 8-byte-aligned `at` >= `from` with at + size <=
// bytes.size() whose `size` bytes are not all zero (a structure with a
// checksum is never all zero), in increasing order, until `probe` returns
// true; returns that offset, or UINT64_MAX.
uint64_t find_forward(std::span<const std::byte> bytes, uint64_t from, uint64_t size,
                      const std::function<bool(uint64_t)>& probe);

}  // namespace commitlog
