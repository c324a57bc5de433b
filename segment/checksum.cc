// SPDX-License-Identifier: Apache-2.0
#include "segment/checksum.h"

#include <xxhash.h>

namespace commitlog {
namespace {

// XXH3-64 of `n` (at most 56) bytes followed by the segment id and the
// offset the bytes sit at. Mixing those in means bytes left behind by another
// segment, or moved within this one, never validate in their new place.
uint64_t checksum_in_place(const std::byte* bytes, size_t n, uint64_t segment_id, uint64_t offset) {
  std::byte buf[72];
  std::memcpy(buf, bytes, n);
  store_u64(buf + n, segment_id);
  store_u64(buf + n + 8, offset);
  return XXH3_64bits(buf, n + 16);
}

}  // namespace

uint64_t checksum(std::span<const std::byte> bytes, uint64_t seed) {
  return XXH3_64bits_withSeed(bytes.data(), bytes.size(), seed);
}

uint64_t marker_checksum(uint64_t next, uint64_t segment_id, uint64_t own_offset) {
  std::byte bytes[8];
  store_u64(bytes, next);
  return checksum_in_place(bytes, sizeof bytes, segment_id, own_offset);
}

uint64_t key_block_checksum(const std::byte* block, uint64_t segment_id, uint64_t own_offset) {
  return checksum_in_place(block, 56, segment_id, own_offset);
}

uint64_t entry_header_checksum(const std::byte* header, uint64_t segment_id, uint64_t own_offset) {
  return checksum_in_place(header, 24, segment_id, own_offset);
}

uint64_t section_header_checksum(const std::byte* header, uint64_t segment_id, uint64_t own_offset) {
  return checksum_in_place(header, 32, segment_id, own_offset);
}

}  // namespace commitlog
