// SPDX-License-Identifier: Apache-2.0
#include "tests/support/test_keys.h"

#include <doctest/doctest.h>
#include <fmt/core.h>

#include <filesystem>

#include "tests/support/log_files.h"

namespace commitlog::testing {

std::string write_key_file(const std::string& path, const std::vector<uint32_t>& ids, uint8_t seed) {
  std::string text = "# test keys\n";
  for (uint32_t id : ids) {
    text += std::to_string(id) + " ";
    for (int i = 0; i < 32; ++i) text += fmt::format("{:02x}", (id * 31 + i * 7 + seed * 101) & 0xff);
    text += "\n";
  }
  write_text(path, text);
  std::filesystem::permissions(path, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write,
                               std::filesystem::perm_options::replace);
  return path;
}

std::shared_ptr<const KeyProvider> test_keys(const std::string& path, const std::vector<uint32_t>& ids,
                                             uint8_t seed) {
  auto keys = load_key_file(write_key_file(path, ids, seed));
  REQUIRE_MESSAGE(keys.ok(), keys.status().message());
  return std::move(keys).value();
}

}  // namespace commitlog::testing
