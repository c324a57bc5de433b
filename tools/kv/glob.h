// SPDX-License-Identifier: Apache-2.0
// Redis's glob, as SCAN MATCH, KEYS and CONFIG GET use it: * ? [abc] [^a-z]
// and \ escapes. A malformed pattern matches what it can; nothing is read
// past its end. As in Redis, the empty text matches the empty pattern alone
// (KEYS and SCAN read "*" as every key before any glob).
#pragma once

#include <string_view>

namespace commitlog::kv {

bool glob_match(std::string_view pattern, std::string_view text);

}  // namespace commitlog::kv
