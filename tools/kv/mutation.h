// SPDX-License-Identifier: Apache-2.0
// The payload of one key-value mutation in the commit log (table kDataTable):
// the changes of one write command, replayed into RocksDB as they were
// applied.
//
//   +----+-----------------------------------------------------------------+
//   | op | body                                                            |
//   +----+-----------------------------------------------------------------+
//   op 4, writes:  varint n, then n times: kind byte (0 put, 1 delete,
//                  2 clear), and for put and delete: varint key length, key;
//                  for put: varint value length, the stored value (value.h)
//   ops 1 (set of raw values), 2 (delete) and 3 (a no-op marker) are
//   decoded as older logs wrote them.
//
// Varints are LEB128: 7 bits a byte, lowest first, high bit set on all but
// the last byte. A mutation carries results, never operations (INCR logs the
// put of its result, EXPIRE the put of the value with its new expiry), so
// applying one twice is harmless. A format change takes a new op.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "commitlog/status.h"
#include "tools/kv/engine.h"

namespace commitlog::kv {

inline constexpr uint32_t kDataTable = 0;

enum class Op : uint8_t { kSet = 1, kDelete = 2, kMarker = 3, kWrites = 4 };

void encode_writes(std::span<const EngineWrite> writes, std::string* out);

// Decodes `payload`; kCorruption naming what is wrong when it is malformed.
[[nodiscard]] Status decode(std::span<const std::byte> payload, std::vector<EngineWrite>* out);

void put_varint(uint64_t value, std::string* out);
// Reads a varint at *pos and advances it; false when truncated or too long.
bool get_varint(std::string_view in, size_t* pos, uint64_t* value);

}  // namespace commitlog::kv
