// SPDX-License-Identifier: Apache-2.0
#include "segment/compression.h"

#include <lz4.h>

#include <climits>

namespace commitlog {

size_t lz4_bound(size_t input_size) {
  return static_cast<size_t>(LZ4_compressBound(static_cast<int>(input_size)));
}

std::optional<size_t> lz4_compress(std::span<const std::byte> input, std::span<std::byte> output) {
  if (input.size() > static_cast<size_t>(LZ4_MAX_INPUT_SIZE)) return std::nullopt;
  const int n = LZ4_compress_default(reinterpret_cast<const char*>(input.data()),
                                     reinterpret_cast<char*>(output.data()),
                                     static_cast<int>(input.size()),
                                     static_cast<int>(std::min<size_t>(output.size(), INT_MAX)));
  if (n <= 0 || static_cast<size_t>(n) >= input.size()) return std::nullopt;
  return static_cast<size_t>(n);
}

bool lz4_decompress(std::span<const std::byte> input, std::span<std::byte> output) {
  if (input.size() > INT_MAX || output.size() > INT_MAX) return false;
  const int n = LZ4_decompress_safe(reinterpret_cast<const char*>(input.data()),
                                    reinterpret_cast<char*>(output.data()),
                                    static_cast<int>(input.size()), static_cast<int>(output.size()));
  return n >= 0 && static_cast<size_t>(n) == output.size();
}

}  // namespace commitlog
