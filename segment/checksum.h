// SPDX-License-Identifier: Apache-2.0
// XXH3-64 checksums and little-endian encoding: the only users of libxxhash.
#pragma once

#include <cstdint>
#include <bit>
#include <cstring>
#include <span>

namespace commitlog {

// XXH3-64 of `bytes` with `seed`.
uint64_t checksum(std::span<const std::byte> bytes, uint64_t seed = 0);

// Checksum of a marker at `own_offset` of segment `segment_id` saying `next`.
uint64_t marker_checksum(uint64_t next, uint64_t segment_id, uint64_t own_offset);
// Checksum of the first 32 bytes of a compressed section header at file offset `own_offset`.
uint64_t section_header_checksum(const std::byte* header, uint64_t segment_id, uint64_t own_offset);
// Checksum of the first 56 bytes of an encrypted segment's key block at `own_offset`.
uint64_t key_block_checksum(const std::byte* block, uint64_t segment_id, uint64_t own_offset);
// Checksum of the first 24 bytes of an entry header at `own_offset`.
uint64_t entry_header_checksum(const std::byte* header, uint64_t segment_id, uint64_t own_offset);

inline void store_u16(std::byte* p, uint16_t v) { std::memcpy(p, &v, sizeof v); }
inline void store_u32(std::byte* p, uint32_t v) { std::memcpy(p, &v, sizeof v); }
inline void store_u64(std::byte* p, uint64_t v) { std::memcpy(p, &v, sizeof v); }
inline uint16_t load_u16(const std::byte* p) { uint16_t v; std::memcpy(&v, p, sizeof v); return v; }
inline uint32_t load_u32(const std::byte* p) { uint32_t v; std::memcpy(&v, p, sizeof v); return v; }
inline uint64_t load_u64(const std::byte* p) { uint64_t v; std::memcpy(&v, p, sizeof v); return v; }

static_assert(std::endian::native == std::endian::little,
              "the format is little-endian; add byte swapping for this target");

}  // namespace commitlog
