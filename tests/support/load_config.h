// SPDX-License-Identifier: Apache-2.0
// A config loaded from yaml text in a test, as if from the file t.yaml.
#pragma once

#include <string>

#include "commitlog/config.h"

namespace commitlog::testing {

// The config `yaml` makes; if it does not load, the test case fails
// (REQUIRE) with the yaml and the error.
LoadedConfig load_ok(const std::string& yaml);

}  // namespace commitlog::testing
