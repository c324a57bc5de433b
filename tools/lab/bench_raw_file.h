// SPDX-License-Identifier: Apache-2.0
// The files of the raw references (bench_raw_engine.cc,
// bench_raw_direct_engine.cc), and how their records are laid out.
//   fallocated   space reserved with posix_fallocate, as the log's segments
//                are: the first write of each block converts an unwritten
//                extent, which its fdatasync must commit;
//   pre-written  a ring of zeros written and synced before the point, as
//                fio's overwrite runs lay out their file first: every write
//                overwrites written blocks, and the ring wraps around.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "commitlog/status.h"

namespace commitlog::tools {

// A raw record: this header (the payload's length, its checksum and the
// producer's sequence number), then the payload.
inline constexpr uint64_t kRawHeaderSize = 16;
void encode_raw_header(std::byte* out, std::span<const std::byte> payload, uint64_t seq);

// Bytes of a pre-written ring for records of `record_bytes`: at least 64 MiB
// and 16 records, a whole number of records.
uint64_t ring_bytes(uint64_t record_bytes);

// Creates `path` (new), `bytes` long: zero-filled and fsynced when
// `prewritten`, else fallocated and fsynced. Returns an fd open read-write
// with `extra_flags` (e.g. O_DIRECT | O_DSYNC) for the caller to close.
Result<int> create_raw_file(const std::string& path, uint64_t bytes, bool prewritten,
                            int extra_flags = 0);

}  // namespace commitlog::tools
