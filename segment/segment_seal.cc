// SPDX-License-Identifier: Apache-2.0
#include "segment/segment_seal.h"

#include "segment/codec.h"
#include "segment/format.h"

namespace commitlog {

// A buffered write, whatever mode wrote the segment: the segment is finished,
// so no direct write to its first block can follow and race with this one.
Status write_seal(FileSystem& fs, const std::string& path, uint64_t segment_id, uint64_t sealed_end) {
  std::byte seal[format::kSealSize];
  encode_seal(sealed_end, segment_id, seal);
  auto file = fs.open(path, OpenMode::kReadWrite);
  if (!file.ok()) return file.status();
  Status written = (*file)->write_at(format::kHeaderSealOffset, seal);
  if (written.ok()) written = (*file)->sync();
  return written;
}

}  // namespace commitlog
