// SPDX-License-Identifier: Apache-2.0
// Snapshots of the key-value table, so that the commit log can be discarded.
//
// snapshot-<segment>-<offset>.kvs holds the table as of the snapshot marker
// at that log position: every mutation before it, none after it.
//
//   +-----------+---------+-------+----------------+---------------+---------+
//   | "CLKVSNAP"| version | flags | marker segment | marker offset | entries |  header, 40 bytes
//   |  8 bytes  |  u32 1  | u32 0 |      u64       |      u64      |   u64   |  (little-endian)
//   +-----------+---------+-------+----------------+---------------+---------+
//   | `entries` times: varint key length, key, varint value length, value   |
//   +------------------------------------------------------------------------+
//   | checksum u64                  | "CLKVEND1"                             |  trailer, 16 bytes
//   +------------------------------------------------------------------------+
// The checksum covers header and entries, in blocks of 1 MiB:
// h = 0; for each block, h = XXH3-64(block, seed h).
//
// Writing: <name>.tmp is written, fsynced, renamed to <name>, and the
// directory fsynced. A file with a final name is therefore complete; a crash
// leaves at most a .tmp, removed at the next start. A snapshot that does not
// verify is reported and passed over.
//
// Thread-safety: free functions, no shared state; one writer per directory.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "commitlog/position.h"
#include "commitlog/file_system.h"
#include "tools/kv/kv_store.h"

namespace commitlog::kv {

// Writes `image` into `dir` as a file with `permissions` (FileSystem::open);
// returns the file's path.
[[nodiscard]] Result<std::string> write_snapshot(FileSystem& fs, const std::string& dir,
                                                 const TableImage& image, uint32_t permissions);

struct SnapshotInfo {
  std::string path;
  Position position;
  uint64_t entries = 0;
};

// Finds the newest snapshot of `dir` that verifies and hands each of its
// entries to `each` (only after the whole file verified). Nothing when there
// is none. Each snapshot passed over is described in `*warnings`.
[[nodiscard]] Result<std::optional<SnapshotInfo>> load_newest_snapshot(
    FileSystem& fs, const std::string& dir,
    const std::function<void(std::string_view key, std::string_view value)>& each,
    std::vector<std::string>* warnings);

// Removes leftover .tmp files and, given `keep`, the snapshots older than it.
[[nodiscard]] Status remove_old_snapshots(FileSystem& fs, const std::string& dir,
                                          std::optional<Position> keep);

}  // namespace commitlog::kv
