// SPDX-License-Identifier: Apache-2.0
// The seal of a version 2 segment (format::kHeaderSealOffset): the record,
// outside the segment's tail, of where its bytes are final. The log writes
// it once a finished segment's end marker is durable, and a process that
// opens a log writes it into the newest segment of a run whose writer
// crashed, where that process found the data to end. A reader then takes
// anything that ends or breaks before the seal for corruption: no damage
// there can be a torn write.
#pragma once

#include <cstdint>
#include <string>

#include "commitlog/file_system.h"
#include "commitlog/status.h"

namespace commitlog {

// Writes the seal of segment `segment_id` at `path`, saying its bytes are
// final below `sealed_end`, and makes it durable. The caller must know that
// everything below `sealed_end` is durable already. The file is opened and
// closed here, so any thread may call it.
[[nodiscard]] Status write_seal(FileSystem& fs, const std::string& path, uint64_t segment_id,
                                uint64_t sealed_end);

}  // namespace commitlog
