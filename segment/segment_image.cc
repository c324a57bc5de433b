#include "segment/segment_image.h"

#include <algorithm>
#include <cstring>

#include "segment/checksum.h"
#include "segment/compression.h"
#include "segment/format.h"

namespace commitlog {
namespace {

// A section header at `at` that checks out and whose stored bytes fit the file.
bool valid_section_at(std::span<const std::byte> file, const SegmentHeader& header, uint64_t at,
                      SectionHeader* out) {
  if (at + format::kSectionHeaderSize > file.size()) return false;
  const auto s = decode_section_header(file.data() + at, header.id, at, header.flags, header.capacity);
  if (!s || s->stored_length > file.size() - at - format::kSectionHeaderSize) return false;
  *out = *s;
  return true;
}

bool zero(std::span<const std::byte> bytes) {
  return std::all_of(bytes.begin(), bytes.end(), [](std::byte b) { return b == std::byte{0}; });
}

// The first valid section header at or after `from`, or UINT64_MAX; with
// `flush_start`, the first one that starts a flush (not kSectionJoined).
uint64_t find_section(std::span<const std::byte> file, const SegmentHeader& header, uint64_t from,
                      bool flush_start = false) {
  SectionHeader s;
  for (uint64_t at = format::align_up(from); at + format::kSectionHeaderSize <= file.size();
       at += format::kAlignment) {
    if (valid_section_at(file, header, at, &s) &&
        !(flush_start && (s.flags & format::kSectionJoined) != 0)) {
      return at;
    }
  }
  return UINT64_MAX;
}

uint64_t nonzero_tail(std::span<const std::byte> file, uint64_t from) {
  uint64_t end = file.size();
  while (end > from && file[end - 1] == std::byte{0}) --end;
  return end > from ? end - from : 0;
}

// Rebuilds the image of a compressed segment. A flush is one section, or in
// kFlagFlushGroups segments a group of them, applied only once its last one
// is read: a power loss before the flush's fdatasync may keep any of its
// sectors, and applying part of a flush would show entries whose payloads
// never arrived. So damage counts as the torn end of the file when no later
// flush starts after it, and what the torn flush wrote is left out.
class ImageBuilder {
 public:
  ImageBuilder(std::span<const std::byte> file, const SegmentHeader& header, SegmentImage& image)
      : file_(file), header_(header), image_(image) {
    image_.owned.assign(file.begin(), file.begin() + static_cast<ptrdiff_t>(std::min<size_t>(
                                                         file.size(), format::kHeaderSize)));
  }

  void run() {
    uint64_t at = format::kHeaderSize;
    while (at + format::kSectionHeaderSize <= file_.size()) {
      SectionHeader s;
      if (!valid_section_at(file_, header_, at, &s)) {
        if (zero(file_.subspan(at, format::kSectionHeaderSize))) break;  // end of sections
        const uint64_t next = find_section(file_, header_, at + format::kAlignment);
        if (next == UINT64_MAX || find_section(file_, header_, next, true) == UINT64_MAX)
          return torn(at);
        damaged({at, next - at, DamageKind::kBadSectionHeader});
        at = next;
        continue;
      }
      const uint64_t stored_at = at + format::kSectionHeaderSize;
      const uint64_t section_end = format::align_up(stored_at + s.stored_length);
      if (checksum(file_.subspan(stored_at, s.stored_length)) != s.stored_checksum) {
        cover(s);
        // A power loss between the pwrite and the fdatasync of the last
        // flush can keep the header's sector and not all the stored bytes'.
        if (find_section(file_, header_, section_end, true) == UINT64_MAX) return torn(at);
        count(s, section_end - at);
        damaged({at, section_end - at, DamageKind::kBadSectionChecksum});
      } else {
        add(at, s, section_end);
      }
      at = section_end;
    }
    if (!group_.empty()) return torn(group_.front().at);  // the flush's last section is missing
  }

 private:
  struct Pending {
    uint64_t at;  // file offset of the section header
    SectionHeader s;
    uint64_t end;
  };

  void add(uint64_t at, const SectionHeader& s, uint64_t end) {
    const bool joined = (s.flags & format::kSectionJoined) != 0;
    if (!joined) {
      if (!group_.empty()) {
        // A flush started before the last one ended: not what a writer leaves.
        const uint64_t from = group_.front().at;
        damaged({from, at - from, DamageKind::kBadSectionHeader});
      }
      broken_ = false;
    } else if (group_.empty() && !broken_) {
      damaged({at, end - at, DamageKind::kBadSectionHeader});  // a flush without its start
    }
    group_.push_back({at, s, end});
    if ((s.flags & format::kSectionMore) == 0 || broken_) apply_group();
  }

  // Damage breaks the open flush: what was read of it is applied, and so is
  // the rest of it, section by section, as best it can be.
  void damaged(SegmentDamage d) {
    apply_group();
    broken_ = true;
    image_.damage.push_back(d);
  }

  void apply_group() {
    for (const Pending& p : group_) apply(p);
    group_.clear();
  }

  // The image reaches at least to the end of `s`'s range (zeros until applied).
  void cover(const SectionHeader& s) {
    std::vector<std::byte>& out = image_.owned;
    if (out.size() < s.image_offset + s.image_length) out.resize(s.image_offset + s.image_length);
  }

  void apply(const Pending& p) {
    const SectionHeader& s = p.s;
    cover(s);
    std::span<std::byte> target{image_.owned.data() + s.image_offset, s.image_length};
    std::span<const std::byte> stored =
        file_.subspan(p.at + format::kSectionHeaderSize, s.stored_length);
    if ((s.flags & format::kSectionRaw) != 0) {
      std::memcpy(target.data(), stored.data(), stored.size());
    } else if (!lz4_decompress(stored, target)) {
      std::fill(target.begin(), target.end(), std::byte{0});
      image_.damage.push_back({p.at, p.end - p.at, DamageKind::kBadCompressedData});
    }
    count(s, p.end - p.at);
  }

  void count(const SectionHeader& s, uint64_t file_bytes) {
    ++image_.sections;
    image_.stored_bytes += file_bytes;
    image_.image_bytes += s.image_length;
  }

  // The file ends in a torn flush at `at`, or at the start of the open group:
  // the image stays as the flushes before it left it.
  void torn(uint64_t at) {
    if (!group_.empty()) at = group_.front().at;
    group_.clear();
    image_.torn_offset = at;
    image_.torn_bytes = nonzero_tail(file_, at);
  }

  std::span<const std::byte> file_;
  const SegmentHeader& header_;
  SegmentImage& image_;
  std::vector<Pending> group_;  // read, checked, not applied yet
  bool broken_ = false;         // after damage, until the next flush starts
};

}  // namespace

SegmentImage load_segment_image(std::span<const std::byte> file, const SegmentHeader& header) {
  SegmentImage image;
  if ((header.flags & format::kFlagLz4Sections) == 0) {
    image.bytes = file;
    return image;
  }
  ImageBuilder(file, header, image).run();
  image.bytes = image.owned;
  return image;
}

}  // namespace commitlog
