// SPDX-License-Identifier: Apache-2.0
// The payload of one key-value mutation in the commit log (table kDataTable).
//
//   +----+-----------------------------------------------------------------+
//   | op | body                                                            |
//   +----+-----------------------------------------------------------------+
//   op 1, set:     varint n, then n times: varint key length, key,
//                                          varint value length, value
//   op 2, delete:  varint n, then n times: varint key length, key
//   op 3, marker:  varint snapshot number (a snapshot was taken here; no-op)
//
// Varints are LEB128: 7 bits a byte, lowest first, high bit set on all but
// the last byte. SET and MSET log a set of their pairs, in argument order;
// INCR logs the set of its result, so replay needs no arithmetic; DEL logs a
// delete of the keys it actually removed. A format change takes a new op.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "commitlog/status.h"

namespace commitlog::kv {

inline constexpr uint32_t kDataTable = 0;

enum class Op : uint8_t { kSet = 1, kDelete = 2, kSnapshotMarker = 3 };

// `keys_and_values` alternates key, value, key, value...
void encode_set(std::span<const std::string_view> keys_and_values, std::string* out);
void encode_delete(std::span<const std::string_view> keys, std::string* out);
void encode_marker(uint64_t snapshot, std::string* out);

struct DecodedMutation {
  Op op = Op::kSet;
  std::vector<std::string_view>
      strings;            // set: key, value, ...; delete: keys; views into the payload
  uint64_t snapshot = 0;  // marker
};

// Decodes `payload`; kCorruption naming what is wrong when it is malformed.
[[nodiscard]] Status decode(std::span<const std::byte> payload, DecodedMutation* out);

// LEB128, shared with the snapshot format.
void put_varint(uint64_t value, std::string* out);
// Reads a varint at *pos and advances it; false when truncated or too long.
bool get_varint(std::string_view in, size_t* pos, uint64_t* value);

}  // namespace commitlog::kv
