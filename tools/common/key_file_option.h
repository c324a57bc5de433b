// SPDX-License-Identifier: Apache-2.0
// --key-file FILE, the master keys of encrypted logs (docs/encryption.md),
// shared by every tool that reads or writes segments.
#pragma once

#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "commitlog/key_provider.h"
#include "commitlog/status.h"

namespace commitlog::tools {

// Adds --key-file to `cmd`, storing the path in `*path`.
CLI::Option* add_key_file_option(CLI::App* cmd, std::string* path);

// The keys in `path`; null when `path` is empty (no --key-file given).
[[nodiscard]] Result<std::shared_ptr<const KeyProvider>> load_key_file_option(const std::string& path);

}  // namespace commitlog::tools
