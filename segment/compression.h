// SPDX-License-Identifier: Apache-2.0
// LZ4 block compression: the only user of liblz4.
#pragma once

#include <cstddef>
#include <optional>
#include <span>

namespace commitlog {

// Largest output lz4_compress() can produce for `input_size` bytes.
size_t lz4_bound(size_t input_size);
// Compresses `input` into `output` (at least lz4_bound(input.size()) bytes).
// Returns the compressed size, or nullopt if it would not be smaller than the input.
std::optional<size_t> lz4_compress(std::span<const std::byte> input, std::span<std::byte> output);
// Decompresses `input` into exactly output.size() bytes. Never reads or writes
// out of bounds, whatever `input` holds; false if `input` is not a valid LZ4
// block of exactly that decompressed size.
bool lz4_decompress(std::span<const std::byte> input, std::span<std::byte> output);

}  // namespace commitlog
