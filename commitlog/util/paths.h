// SPDX-License-Identifier: Apache-2.0
// Comparing directory paths as the file system resolves them.
#pragma once

#include <string>

namespace commitlog {

// `path` with symbolic links, "." and ".." resolved as far as it exists
// (the rest taken as written) and no trailing separator, so two spellings
// of one directory compare equal.
std::string resolved_path(const std::string& path);

}  // namespace commitlog
