// SPDX-License-Identifier: Apache-2.0
// Size arguments of the commands, in the yaml's syntax: 4KiB, 32MiB, 1GiB,
// or a bare count of bytes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

#include "commitlog/status.h"

namespace commitlog::tools {

// kInvalidArgument "'<text>' is not a size (e.g. 100, 4KiB, 32MiB)".
[[nodiscard]] Result<uint64_t> parse_size_argument(std::string_view text);

// Adds `name` to `cmd`, storing a size in that syntax from `min` to `max` in
// `*bytes`; --help shows it as SIZE, with the current value of `*bytes` as
// the default unless 0.
CLI::Option* add_size_option(CLI::App* cmd, const std::string& name, uint64_t* bytes, const std::string& description,
                             uint64_t min = 0, uint64_t max = UINT64_MAX);

}  // namespace commitlog::tools
