// SPDX-License-Identifier: Apache-2.0
#include "tests/support/file_modes.h"

#include <sys/stat.h>

#include <filesystem>

#include <doctest/doctest.h>

namespace commitlog::testing {

uint32_t mode_of(const std::string& path) {
  struct stat st {};
  REQUIRE_MESSAGE(::stat(path.c_str(), &st) == 0, path);
  return st.st_mode & 07777;
}

size_t check_modes_under(const std::string& root, uint32_t file_mode, uint32_t directory_mode) {
  size_t files = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    const std::string path = entry.path().string();
    CAPTURE(path);
    CHECK(mode_of(path) == (entry.is_directory() ? directory_mode : file_mode));
    if (entry.is_regular_file()) ++files;
  }
  return files;
}

Umask::Umask(mode_t mask) : old_(::umask(mask)) {}
Umask::~Umask() { ::umask(old_); }

}  // namespace commitlog::testing
