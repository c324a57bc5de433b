// SPDX-License-Identifier: Apache-2.0
// The data key of an encrypted segment and the key block that carries it,
// wrapped by a master key (format.h): made for a new segment, opened for a
// read. Shared by sealed sections and sealed entries.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "commitlog/key_provider.h"
#include "segment/crypto/cipher.h"
#include "segment/format.h"

namespace commitlog::crypto {

struct NewSegmentKey {
  std::array<std::byte, format::kKeyBlockSize> block;  // goes at format::kKeyBlockOffset
  Key data_key;
};
// A fresh random data key wrapped by the provider's active key.
[[nodiscard]] Result<NewSegmentKey> new_segment_key(const KeyProvider& keys, uint64_t segment_id);

struct OpenedSegmentKey {
  bool block_intact = false;       // false: the key block is damaged or cut
  std::optional<uint32_t> key_id;  // the master key it names, when intact
  std::optional<Key> data_key;     // when `keys` hold that key and it unwraps
  Status status;                   // why there is no data key, naming the segment and key id
};
// Opens the key block at format::kKeyBlockOffset of `file`, the segment
// `segment_id`'s bytes. `keys`: null when none were given.
OpenedSegmentKey open_segment_key(std::span<const std::byte> file, uint64_t segment_id, const KeyProvider* keys);

}  // namespace commitlog::crypto
