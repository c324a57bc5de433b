// SPDX-License-Identifier: Apache-2.0
// The permission bits of what a test finds on disk, and the process umask
// set for a scope, for the tests of what the log and the tools create.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace commitlog::testing {

// The permission bits of `path` (a doctest REQUIRE that it exists).
uint32_t mode_of(const std::string& path);

// Checks (doctest CHECKs) that every directory below `root` has
// `directory_mode` and every other entry `file_mode`; returns how many
// regular files it found.
size_t check_modes_under(const std::string& root, uint32_t file_mode, uint32_t directory_mode);

// Sets the process umask, and restores the old one at the end of the scope.
// A child process started meanwhile inherits it.
class Umask {
 public:
  explicit Umask(mode_t mask);
  ~Umask();
  Umask(const Umask&) = delete;
  Umask& operator=(const Umask&) = delete;

 private:
  mode_t old_;
};

}  // namespace commitlog::testing
