// SPDX-License-Identifier: Apache-2.0
#include "tests/support/load_config.h"

#include <doctest/doctest.h>

#include <utility>

namespace commitlog::testing {

LoadedConfig load_ok(const std::string& yaml) {
  Result<LoadedConfig> config = load_config_string(yaml, "t.yaml");
  INFO(yaml);
  REQUIRE_MESSAGE(config.ok(), config.status().to_string());
  return std::move(config).value();
}

}  // namespace commitlog::testing
