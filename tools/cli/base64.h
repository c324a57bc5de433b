// SPDX-License-Identifier: Apache-2.0
// Standard base64 (RFC 4648, with '=' padding) for the JSON the tools print.
// The replay command encodes every payload, so the encoder works on 3-byte
// groups through a 4096-entry table of character pairs.
#pragma once

#include <cstddef>
#include <span>
#include <string>

namespace commitlog::tools {

// Characters base64 needs for `n` bytes.
constexpr size_t base64_size(size_t n) { return (n + 2) / 3 * 4; }

// Writes base64_size(in.size()) characters to `out`; returns one past the last.
char* base64_encode(std::span<const std::byte> in, char* out);

std::string base64(std::span<const std::byte> in);

}  // namespace commitlog::tools
