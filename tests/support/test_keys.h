// SPDX-License-Identifier: Apache-2.0
// Master keys for tests of encrypted logs: key files written with mode 0600,
// each key's bytes made from its id and a seed, so two files can hold the
// same id with different keys (a wrong key).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "commitlog/key_provider.h"

namespace commitlog::testing {

// Writes `path` with a key for each id (bytes from the id and `seed`) and
// mode 0600, and returns its path.
std::string write_key_file(const std::string& path, const std::vector<uint32_t>& ids, uint8_t seed = 1);
// The provider of such a file, or the test case fails (REQUIRE).
std::shared_ptr<const KeyProvider> test_keys(const std::string& path, const std::vector<uint32_t>& ids,
                                             uint8_t seed = 1);

}  // namespace commitlog::testing
