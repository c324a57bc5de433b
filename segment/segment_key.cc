// SPDX-License-Identifier: Apache-2.0
#include "segment/segment_key.h"

#include <string>

#include "segment/codec.h"

namespace commitlog::crypto {

// A data key per segment, so that nonces need only be unique within one.
Result<NewSegmentKey> new_segment_key(const KeyProvider& keys, uint64_t segment_id) {
  const uint32_t id = keys.active_key_id();
  auto master = keys.key(id);
  if (!master.ok()) return master.status();
  NewSegmentKey out;
  const std::optional<Key> data_key = random_key();
  const auto wrapped = data_key ? wrap_key(*master, *data_key) : std::nullopt;
  if (!wrapped) return Status::io_error("libcrypto could not make a data key for segment " + std::to_string(segment_id));
  out.data_key = *data_key;
  encode_key_block(out.block.data(), {id, *wrapped}, segment_id);
  return out;
}

OpenedSegmentKey open_segment_key(std::span<const std::byte> file, uint64_t segment_id, const KeyProvider* keys) {
  OpenedSegmentKey out;
  const uint64_t at = format::kKeyBlockOffset;
  const std::optional<KeyBlock> block =
      file.size() >= at + format::kKeyBlockSize ? decode_key_block(file.data() + at, segment_id) : std::nullopt;
  const std::string segment = "segment " + std::to_string(segment_id);
  if (!block) {
    out.status = Status::corruption(segment + ": its key block is damaged");
    return out;
  }
  out.block_intact = true;
  const uint32_t id = block->master_key_id;
  out.key_id = id;
  if (keys == nullptr) {
    out.status = Status::invalid_argument(segment + " is encrypted with master key " + std::to_string(id) +
                                          " and no key was given");
    return out;
  }
  auto master = keys->key(id);
  if (!master.ok()) {
    out.status = Status::not_found(segment + " needs master key " + std::to_string(id) + ", which " +
                                   keys->source() + " does not hold");
    return out;
  }
  out.data_key = unwrap_key(*master, block->wrapped);
  if (!out.data_key) {
    out.status = Status::invalid_argument(segment + ": master key " + std::to_string(id) + " from " +
                                          keys->source() + " does not unwrap its data key (a wrong key)");
  }
  return out;
}

}  // namespace commitlog::crypto
