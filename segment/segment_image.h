// The image of a segment file as the segment reader reads it: for a plain
// segment the file's bytes themselves; for a compressed one the image rebuilt
// by checking and decompressing its sections in file order.
//
// A section whose header checksum fails, with a valid section after it, is
// damage (the reader skips to that section); with nothing valid after it, it
// is the torn end of the file. A section whose stored bytes fail their
// checksum is damage too, or the torn end when it is the last section (a power
// loss between its pwrite and its fdatasync); one whose bytes do not
// decompress to exactly their stated length is damage. The decoder never
// reads or writes out of bounds. Damaged parts of the image
// stay zero, so the segment reader sees them as damage too.
//
// In kFlagFlushGroups segments one flush may be a group of sections; the
// rules above then apply per flush: damage is the torn end when no later
// flush starts after it, and a torn flush is left out of the image whole.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "segment/segment_reader.h"

namespace commitlog {

struct SegmentImage {
  std::span<const std::byte> bytes;   // what SegmentReader reads
  std::vector<std::byte> owned;       // the rebuilt image of a compressed segment
  std::vector<SegmentDamage> damage;  // compressed segments: in file offsets
  uint64_t torn_offset = 0;           // file offset where a torn end starts
  uint64_t torn_bytes = 0;            // non-zero bytes from there on
  uint64_t sections = 0;              // valid compressed sections
  uint64_t stored_bytes = 0;          // file bytes of those sections
  uint64_t image_bytes = 0;           // image bytes they restore
};

// `file` must outlive the result when the segment is not compressed.
SegmentImage load_segment_image(std::span<const std::byte> file, const SegmentHeader& header);

}  // namespace commitlog
