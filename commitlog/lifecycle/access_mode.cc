// SPDX-License-Identifier: Apache-2.0
#include "commitlog/lifecycle/access_mode.h"

#include <filesystem>

namespace commitlog {

StorageMode AccessModeChoice::storage() const {
  switch (mode) {
    case DiskAccessMode::kStandard: return {SegmentIo::kStandard, 0};
    case DiskAccessMode::kDirect: return {SegmentIo::kDirect, block_size};
    default: return {SegmentIo::kMapped, 0};
  }
}

const char* access_mode_name(DiskAccessMode mode) {
  for (const auto& [name, m] : kDiskAccessModes) {
    if (m == mode) return name.data();
  }
  return "unknown";
}

Result<AccessModeChoice> choose_access_mode_before_open(const Options& o) {
  std::filesystem::path dir = o.directory;
  while (!o.file_system->is_directory(dir.string()) && dir.has_relative_path() && dir != dir.parent_path()) {
    dir = dir.parent_path();
  }
  return choose_access_mode(o, dir.empty() ? "." : dir.string());
}

Result<AccessModeChoice> choose_access_mode(const Options& o, const std::string& probe_dir) {
  // Cassandra's legacy: standard for compressed or encrypted segments.
  const bool compressed = writes_sections(o);
  AccessModeChoice legacy;
  legacy.mode = compressed || o.encryption != nullptr ? DiskAccessMode::kStandard : DiskAccessMode::kMmap;
  legacy.reason = o.encryption != nullptr ? "as segments are encrypted"
                  : compressed            ? "as commitlog_compression is set"
                                          : "as commitlog_compression is not set";
  switch (o.disk_access_mode) {
    case DiskAccessMode::kLegacy: return legacy;
    case DiskAccessMode::kMmap:
    case DiskAccessMode::kStandard: return AccessModeChoice{o.disk_access_mode, 0, ""};
    case DiskAccessMode::kDirect: {
      auto block = o.file_system->direct_io_block_size(probe_dir);
      if (!block.ok()) return Status::not_supported("commitlog_disk_access_mode (direct): " + block.status().message());
      return AccessModeChoice{DiskAccessMode::kDirect, *block, ""};
    }
    case DiskAccessMode::kAuto: {
      // Direct I/O where the file system has it: a flush writes exactly its
      // blocks, with no page-cache folio written back whole around them, and
      // segments, which only replay reads, take no page-cache memory.
      auto block = o.file_system->direct_io_block_size(probe_dir);
      if (block.ok()) return AccessModeChoice{DiskAccessMode::kDirect, *block, "as O_DIRECT works in " + probe_dir};
      legacy.reason = "legacy's choice, as " + block.status().message();
      return legacy;
    }
  }
  return legacy;
}

}  // namespace commitlog
