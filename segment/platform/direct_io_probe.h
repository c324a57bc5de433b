// SPDX-License-Identifier: Apache-2.0
// How the POSIX file system answers FileSystem::direct_io_block_size()
// (commitlog/file_system.h): whether files in a directory can be written
// with O_DIRECT, and the alignment those writes need.
#pragma once

#include <cstdint>
#include <string>

#include "commitlog/status.h"

namespace commitlog {

// The logical block size of the device behind `dir`, at least 4096, from
// statx(STATX_DIOALIGN) where the file system reports it, else from the
// smallest O_DIRECT write of 4 KiB to 64 KiB that succeeds. kNotSupported
// naming `dir` on tmpfs and ramfs (their files live in the page cache, so
// there is no device to bypass it to) and where O_DIRECT is refused. The
// probe file is unnamed (O_TMPFILE), or, where the file system has no
// O_TMPFILE, created and unlinked at once.
[[nodiscard]] Result<uint64_t> probe_direct_io_block_size(const std::string& dir);

}  // namespace commitlog
