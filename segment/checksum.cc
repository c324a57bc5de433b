#include "segment/checksum.h"

#include <xxhash.h>

namespace commitlog {

uint64_t checksum(std::span<const std::byte> bytes, uint64_t seed) {
  return XXH3_64bits_withSeed(bytes.data(), bytes.size(), seed);
}

// Mixing the segment id and the offset into marker and entry checksums means
// bytes left behind by another segment, or moved within this one, never
// validate in their new place.
uint64_t marker_checksum(uint64_t next, uint64_t segment_id, uint64_t own_offset) {
  std::byte buf[24];
  store_u64(buf, next);
  store_u64(buf + 8, segment_id);
  store_u64(buf + 16, own_offset);
  return XXH3_64bits(buf, sizeof buf);
}

uint64_t entry_header_checksum(const std::byte* header, uint64_t segment_id, uint64_t own_offset) {
  std::byte buf[40];
  std::memcpy(buf, header, 24);
  store_u64(buf + 24, segment_id);
  store_u64(buf + 32, own_offset);
  return XXH3_64bits(buf, sizeof buf);
}

uint64_t section_header_checksum(const std::byte* header, uint64_t segment_id, uint64_t own_offset) {
  std::byte buf[48];
  std::memcpy(buf, header, 32);
  store_u64(buf + 32, segment_id);
  store_u64(buf + 40, own_offset);
  return XXH3_64bits(buf, sizeof buf);
}

}  // namespace commitlog
