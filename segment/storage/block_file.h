// SPDX-License-Identifier: Apache-2.0
// A File that takes writes of any offset and length and makes them whole
// blocks of direct I/O: the compressed segments of commitlog_disk_access_mode
// direct, whose sections start and end anywhere.
//
// It keeps a copy of every byte written so far in an aligned buffer, and each
// write_at() writes the blocks it touches from there, whole: a block written
// in part before is rewritten with its old bytes and the new ones. allocate()
// pre-writes the range, zeros where nothing was written, instead of
// reserving it: later writes then overwrite written blocks, and no
// fdatasync has extents to convert. The file's size is always a whole number
// of blocks: what a write or an allocation reaches, rounded up, or what
// truncate() leaves.
//
// Memory: the copy is as large as the file.
// Thread-safety: as File; calls that write are serialised.
#pragma once

#include <cstdint>
#include <memory>

#include "commitlog/file_system.h"

namespace commitlog {

// `direct`: opened OpenMode::kReadWriteDirect, empty. `block_size`: its
// directory's FileSystem::direct_io_block_size().
std::unique_ptr<File> make_block_file(std::unique_ptr<File> direct, uint64_t block_size);

}  // namespace commitlog
