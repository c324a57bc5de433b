#include "segment/segment_image.h"

#include <algorithm>
#include <cstring>

#include "segment/checksum.h"
#include "segment/compression.h"
#include "segment/format.h"

namespace commitlog {
namespace {

struct SectionHeader {
  uint64_t image_offset = 0;
  uint32_t image_length = 0;
  uint32_t stored_length = 0;
  uint32_t flags = 0;
  uint64_t stored_checksum = 0;
};

// A section header at `at` that checks out and fits both the file and the image.
bool valid_section_at(std::span<const std::byte> file, const SegmentHeader& header, uint64_t at,
                      SectionHeader* out) {
  if (at + format::kSectionHeaderSize > file.size()) return false;
  const std::byte* h = file.data() + at;
  if (load_u64(h + format::kSectionHeaderChecksum) != section_header_checksum(h, header.id, at)) return false;
  out->image_offset = load_u64(h + format::kSectionImageOffset);
  out->image_length = load_u32(h + format::kSectionImageLength);
  out->stored_length = load_u32(h + format::kSectionStoredLength);
  out->flags = load_u32(h + format::kSectionFlags);
  out->stored_checksum = load_u64(h + format::kSectionStoredChecksum);
  return out->image_offset >= format::kHeaderSize &&
         out->image_offset + out->image_length <= header.capacity &&
         at + format::kSectionHeaderSize + out->stored_length <= file.size() &&
         (out->flags & ~format::kSectionRaw) == 0 &&
         ((out->flags & format::kSectionRaw) == 0 || out->stored_length == out->image_length);
}

bool zero(std::span<const std::byte> bytes) {
  return std::all_of(bytes.begin(), bytes.end(), [](std::byte b) { return b == std::byte{0}; });
}

// The first valid section header at or after `from`, or UINT64_MAX.
uint64_t find_section(std::span<const std::byte> file, const SegmentHeader& header, uint64_t from) {
  SectionHeader s;
  for (uint64_t at = format::align_up(from); at + format::kSectionHeaderSize <= file.size();
       at += format::kAlignment) {
    if (valid_section_at(file, header, at, &s)) return at;
  }
  return UINT64_MAX;
}

uint64_t nonzero_tail(std::span<const std::byte> file, uint64_t from) {
  uint64_t end = file.size();
  while (end > from && file[end - 1] == std::byte{0}) --end;
  return end > from ? end - from : 0;
}

}  // namespace

SegmentImage load_segment_image(std::span<const std::byte> file, const SegmentHeader& header) {
  SegmentImage image;
  if ((header.flags & format::kFlagLz4Sections) == 0) {
    image.bytes = file;
    return image;
  }
  std::vector<std::byte>& out = image.owned;
  out.assign(file.begin(), file.begin() + static_cast<ptrdiff_t>(std::min<size_t>(file.size(), format::kHeaderSize)));
  uint64_t at = format::kHeaderSize;
  while (at + format::kSectionHeaderSize <= file.size()) {
    SectionHeader s;
    if (!valid_section_at(file, header, at, &s)) {
      if (zero(file.subspan(at, format::kSectionHeaderSize))) break;  // end of sections
      uint64_t next = at + format::kAlignment;
      while (next + format::kSectionHeaderSize <= file.size() && !valid_section_at(file, header, next, &s)) {
        next += format::kAlignment;
      }
      if (next + format::kSectionHeaderSize > file.size()) {
        image.torn_offset = at;
        image.torn_bytes = nonzero_tail(file, at);
        break;
      }
      image.damage.push_back({at, next - at, DamageKind::kBadSectionHeader});
      at = next;
      continue;
    }
    const uint64_t stored_at = at + format::kSectionHeaderSize;
    const uint64_t section_end = format::align_up(stored_at + s.stored_length);
    std::span<const std::byte> stored = file.subspan(stored_at, s.stored_length);
    if (out.size() < s.image_offset + s.image_length) out.resize(s.image_offset + s.image_length);
    std::span<std::byte> target{out.data() + s.image_offset, s.image_length};
    if (checksum(stored) != s.stored_checksum) {
      if (find_section(file, header, section_end) == UINT64_MAX) {
        // The last section: a power loss between its pwrite and its
        // fdatasync can keep the header's sector and not all the stored
        // bytes'. Like a damaged last header, it is the torn end of the file;
        // the image stays as the sections before it left it.
        image.torn_offset = at;
        image.torn_bytes = nonzero_tail(file, at);
        break;
      }
      image.damage.push_back({at, section_end - at, DamageKind::kBadSectionChecksum});
    } else if ((s.flags & format::kSectionRaw) != 0) {
      std::memcpy(target.data(), stored.data(), stored.size());
    } else if (!lz4_decompress(stored, target)) {
      std::fill(target.begin(), target.end(), std::byte{0});
      image.damage.push_back({at, section_end - at, DamageKind::kBadCompressedData});
    }
    ++image.sections;
    image.stored_bytes += section_end - at;
    image.image_bytes += s.image_length;
    at = section_end;
  }
  image.bytes = out;
  return image;
}

}  // namespace commitlog
