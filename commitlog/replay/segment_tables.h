// SPDX-License-Identifier: Apache-2.0
// Which tables a segment file already on disk holds, so that a segment from
// before this process can be deleted once every one of them is discarded.
// Read once per file, with the replayer's reader, on the lifecycle thread.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "commitlog/replayer.h"
#include "segment/storage/mapped_segment.h"

namespace commitlog {

struct SegmentTables {
  std::vector<TableExtent> tables;  // sorted by table
  // Why the file must be kept for the operator (a bad header, a corrupt
  // section or entry); empty when intact. A torn tail is intact: it is the
  // normal end of a crashed run. A file that was never written (all zeros)
  // is intact and holds no tables.
  std::string damage;
};

// `buffer` is reused between calls. `keys`: for an encrypted segment; one
// that cannot be opened is damage named by why.
[[nodiscard]] Result<SegmentTables> read_segment_tables(FileSystem& fs, const SegmentFile& file,
                                                        std::vector<std::byte>* buffer,
                                                        const KeyProvider* keys = nullptr);

}  // namespace commitlog
