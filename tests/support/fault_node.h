// SPDX-License-Identifier: Apache-2.0
// FaultFileSystem's file contents, shared by its files and its crash().
#pragma once

#include <cstddef>
#include <vector>

#include "tests/support/fault_file_system.h"

namespace commitlog::testing {

// One file's contents (an inode). Several paths (before a sync_dir) and open
// Files may share it.
struct FaultFileSystem::Node {
  // Current contents. A mapping points into this buffer, so it never grows
  // while mapped (mappings > 0).
  std::vector<std::byte> data;
  // What survives a crash; its size is the durable file size.
  std::vector<std::byte> durable;
  int mappings = 0;
  uint32_t permissions = 0;  // as created
};

}  // namespace commitlog::testing
