// SPDX-License-Identifier: Apache-2.0
// The payloads `commitlog bench` appends (--payload), each kind a pool of
// records the producers pick from, the same for a given size and seed:
//   fill    `size` bytes of 0x5a, one record: what every table before this
//           option measured; compresses to almost nothing.
//   random  `size` random bytes per record: incompressible.
//   kv      key/value records as a store would log them, of size/2 to
//           3*size/2 bytes (mean `size`; --sizes 200 gives 100-300 B): a key
//           like "user:000123456:profile", JSON-like fields whose names
//           repeat from record to record, numbers, and a random token.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "commitlog/status.h"

namespace commitlog::tools {

enum class PayloadKind { kFill, kRandom, kKv };

[[nodiscard]] Result<PayloadKind> parse_payload_kind(const std::string& text);
const char* payload_kind_name(PayloadKind kind);

// The pool for one benchmark point. Deterministic for (kind, size, seed).
std::vector<std::vector<std::byte>> make_payloads(PayloadKind kind, uint64_t size, uint64_t seed);

}  // namespace commitlog::tools
