// SPDX-License-Identifier: Apache-2.0
// The disk access mode a log writes its segments with: commitlog_disk_access_mode
// with legacy and auto resolved (Options::disk_access_mode), and why.
#pragma once

#include <cstdint>
#include <string>

#include "commitlog/options.h"
#include "segment/storage/segment_storage.h"

namespace commitlog {

struct AccessModeChoice {
  DiskAccessMode mode = DiskAccessMode::kMmap;  // kMmap, kStandard or kDirect
  uint64_t block_size = 0;                      // kDirect: the direct I/O block size
  std::string reason;  // for legacy and auto: why this mode ("as commitlog_compression is set")
  // The storage of each segment (segment/storage/segment_storage.h).
  StorageMode storage() const;
};

// The mode `options` ask for, probing direct I/O in `probe_dir` (through
// options.file_system) for direct and auto. kNotSupported naming the
// directory when direct is asked for and the file system cannot take it.
[[nodiscard]] Result<AccessModeChoice> choose_access_mode(const Options& options, const std::string& probe_dir);

// choose_access_mode() as open() will: probing commitlog_directory, or before
// the log creates it, its nearest existing parent. For checks that refuse a
// configuration before anything is opened (`commitlog config`, commitlog-kv).
[[nodiscard]] Result<AccessModeChoice> choose_access_mode_before_open(const Options& options);

const char* access_mode_name(DiskAccessMode mode);

// Whether the log's segments are written in sections, through a pooled image
// (compressed, then encrypted if asked), rather than in the plain layout
// (whose entries are sealed one by one when encrypted).
inline bool writes_sections(const Options& o) { return o.compression != Compression::kNone; }

}  // namespace commitlog
