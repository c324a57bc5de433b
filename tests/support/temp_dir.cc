// SPDX-License-Identifier: Apache-2.0
#include "tests/support/temp_dir.h"

#include <cstdlib>
#include <filesystem>
#include <stdexcept>

namespace commitlog::testing {

TempDir::TempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "commitlog-test-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace commitlog::testing
