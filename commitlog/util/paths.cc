// SPDX-License-Identifier: Apache-2.0
#include "commitlog/util/paths.h"

#include <filesystem>
#include <system_error>

namespace commitlog {

std::string resolved_path(const std::string& path) {
  std::error_code ec;
  std::filesystem::path p = std::filesystem::weakly_canonical(path, ec);
  if (ec) p = std::filesystem::path(path).lexically_normal();
  if (!p.has_filename() && p.has_parent_path() && p != p.root_path()) p = p.parent_path();  // "a/b/" is "a/b"
  return p.string();
}

}  // namespace commitlog
