// SPDX-License-Identifier: Apache-2.0
#include "segment/segment_image.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <string>

#include "segment/byte_scan.h"
#include "segment/checksum.h"
#include "segment/compression.h"
#include "segment/crypto/cipher.h"
#include "segment/segment_key.h"
#include "segment/format.h"

namespace commitlog {
namespace {

bool zero(std::span<const std::byte> bytes) {
  return std::all_of(bytes.begin(), bytes.end(), [](std::byte b) { return b == std::byte{0}; });
}

// The key block of an encrypted segment: its key id and status go to
// `image`, and damage to it too.
crypto::OpenedSegmentKey open_key(std::span<const std::byte> file, const SegmentHeader& header,
                                  const KeyProvider* keys, SegmentImage& image) {
  crypto::OpenedSegmentKey opened = crypto::open_segment_key(file, header.id, keys);
  image.key_id = opened.key_id;
  if (!opened.block_intact) {
    const uint64_t at = format::kKeyBlockOffset;
    const uint64_t end = std::max(nonzero_end(file, at), std::min<uint64_t>(file.size(), at + format::kKeyBlockSize));
    image.damage.push_back({at, end > at ? end - at : 0, DamageKind::kBadKeyBlock, true, at});
  } else {
    image.key_status = opened.status;
  }
  return opened;
}

bool starts_flush(const SectionHeader& s) { return (s.flags & format::kSectionJoined) == 0; }

uint64_t section_footprint(const SectionHeader& s) {
  return format::align_up(format::kSectionHeaderSize + uint64_t{s.stored_length});
}

// Rebuilds the image of a compressed segment (see the header comment).
class ImageBuilder {
 public:
  ImageBuilder(std::span<const std::byte> file, uint64_t file_size, const SegmentHeader& header,
               SegmentImage& image)
      : file_(file),
        file_size_(file_size),
        header_(header),
        image_(image),
        allocated_(format::first_section_offset(header.flags)) {
    image_.owned.assign(file.begin(), file.begin() + static_cast<ptrdiff_t>(format::kHeaderSize));
  }

  void run(const KeyProvider* keys) {
    if ((header_.flags & format::kFlagEncrypted) != 0 && !open_key_block(keys)) return;
    uint64_t at = allocated_;
    while (at + format::kSectionHeaderSize <= file_.size()) {
      const std::optional<SectionHeader> s = header_at(at);
      if (s) note_allocation(at, *s);
      if (!s || section_footprint(*s) > file_.size() - at) {
        const bool zeroed = zero(file_.subspan(at, format::kSectionHeaderSize));
        const DamageKind kind = zeroed ? DamageKind::kZeroedSectionHeader : DamageKind::kBadSectionHeader;
        const uint64_t next = resume_point(at);
        if (next == UINT64_MAX) return torn_end(at, kind);
        damaged({at, next - at, kind, true, chain_});
        at = next;
        continue;
      }
      const uint64_t end = at + section_footprint(*s);
      const auto stored = file_.subspan(at + format::kSectionHeaderSize, s->stored_length);
      if (checksum(stored) != s->stored_checksum) {
        cover(*s);
        // A power loss between the pwrite and the fdatasync of the last
        // flush can keep the header's sector and not all the stored bytes'.
        if (!flush_start_after(end)) return torn_end(at, DamageKind::kBadSectionChecksum, s);
        count(*s, end - at);
        damaged({at, end - at, DamageKind::kBadSectionChecksum, true, s->image_offset, s->image_length});
      } else {
        add(at, *s, end);
      }
      at = end;
    }
    ends_in_fragment_ = at < file_.size();
    if (!group_.empty()) return torn_end(group_.front().at, DamageKind::kIncompleteFlushGroup);
    stop();
  }

 private:
  struct Pending {
    uint64_t at;  // file offset of the section header
    SectionHeader s;
    uint64_t end;
  };

  // The data key from the key block, or why there is none: damage to the
  // block ends the walk; a key problem leaves the framing to check.
  bool open_key_block(const KeyProvider* keys) {
    crypto::OpenedSegmentKey opened = open_key(file_, header_, keys, image_);
    if (!opened.block_intact) return false;
    if (opened.data_key) gcm_ = std::make_unique<crypto::Gcm>(*opened.data_key);
    return true;
  }

  bool encrypted() const { return (header_.flags & format::kFlagEncrypted) != 0; }

  std::optional<SectionHeader> header_at(uint64_t at) const {
    if (at + format::kSectionHeaderSize > file_.size()) return std::nullopt;
    return decode_section_header(file_.data() + at, header_.id, at, header_.flags, header_.capacity);
  }

  bool valid_at(uint64_t at, bool flush_start) const {
    const auto s = header_at(at);
    return s && section_footprint(*s) <= file_.size() - at && (!flush_start || starts_flush(*s));
  }

  // The first valid section header that starts a flush at or after `from`.
  bool flush_start_after(uint64_t from) const {
    return find_forward(file_, from, format::kSectionHeaderSize,
                        [&](uint64_t c) { return valid_at(c, true); }) != UINT64_MAX;
  }

  // Where the walk resumes after damage at `at`: the next valid section, if
  // a flush starts at or after it (else the damage is the torn end).
  uint64_t resume_point(uint64_t at) const {
    const uint64_t next = find_forward(file_, at + format::kAlignment, format::kSectionHeaderSize,
                                       [&](uint64_t c) { return valid_at(c, false); });
    if (next == UINT64_MAX || !flush_start_after(next)) return UINT64_MAX;
    return next;
  }

  // The writer allocates the file in steps as sections reach past it.
  void note_allocation(uint64_t at, const SectionHeader& s) {
    const uint64_t total = section_footprint(s);
    if (at + total <= allocated_) return;
    allocated_ += std::max(std::min(format::kCompressedAllocationStep, header_.capacity), total);
  }

  void add(uint64_t at, const SectionHeader& s, uint64_t end) {
    if (starts_flush(s)) {
      image_.durable_below = std::max(image_.durable_below, s.image_offset);
      if (!group_.empty()) {
        // A flush started before the last one ended: not what a writer leaves.
        const uint64_t from = group_.front().at;
        damaged({from, at - from, DamageKind::kBadSectionHeader, true, chain_});
      }
      broken_ = false;
    } else if (group_.empty() && !broken_) {
      damaged({at, end - at, DamageKind::kBadSectionHeader, true, chain_});  // a flush without its start
    }
    group_.push_back({at, s, end});
    if ((s.flags & format::kSectionMore) == 0 || broken_) apply_group();
  }

  // Damage breaks the open flush: what was read of it is applied, and so is
  // the rest of it, section by section, as best it can be.
  void damaged(SectionDamage d) {
    apply_group();
    broken_ = true;
    image_.damage.push_back(d);
  }

  // The file ends in the torn flush that starts at `at` (or at the start of
  // the open group, which is left out whole); `s` is the header there, when
  // it is readable.
  void torn_end(uint64_t at, DamageKind kind, const std::optional<SectionHeader>& s = std::nullopt) {
    if (s) group_.push_back({at, *s, at});
    uint64_t image_at = chain_, image_end = chain_;
    if (!group_.empty()) {
      at = group_.front().at;
      image_at = group_.front().s.image_offset;
      for (const Pending& p : group_) image_end = std::max(image_end, p.s.image_offset + p.s.image_length);
    }
    group_.clear();
    const uint64_t end = nonzero_end(file_, at);
    if (end > at) image_.damage.push_back({at, end - at, kind, false, image_at, image_end - image_at});
    stop();
  }

  // Whether the file was cut. The writer takes a step only when the next
  // section would reach past the file's end, and note_allocation() repeats
  // that, so every section read lies below allocated_ and the file the
  // writer left was at least that long. A cut inside or after a section read
  // leaves the file below allocated_, but for a cut inside the header of a
  // section the writer took a step for: the walk then ends on a fragment
  // shorter than a header.
  // A file longer than allocated_ but short of one more step is a growth the
  // disk did not finish: on a full disk ext4's fallocate keeps what it
  // allocated, and a short direct write of a step's zeros extends the file
  // too. The writer cuts it back, but a crash or a failed ftruncate may leave
  // it: zeros past allocated_, and no fragment.
  // A file that goes on past the read limit was not cut; no writer made it.
  void stop() {
    const uint64_t size = file_.size();
    if (file_size_ > size) {
      image_.damage.push_back({size, file_size_ - size, DamageKind::kLongerThanWritten, true, chain_});
      return;
    }
    const uint64_t step = std::min(format::kCompressedAllocationStep, header_.capacity);
    const bool unfinished_growth = !ends_in_fragment_ && nonzero_end(file_, allocated_) == allocated_;
    if (size < allocated_ ||
        (size > allocated_ && size < allocated_ + step && !unfinished_growth && !whole_blocks_of_allocation(size))) {
      image_.damage.push_back({size, allocated_ > size ? allocated_ - size : 0, DamageKind::kTruncated, true,
                               chain_});
    }
  }

  // kFlagWholeBlocks: the allocation rounded up to a direct I/O block.
  bool whole_blocks_of_allocation(uint64_t size) const {
    if ((header_.flags & format::kFlagWholeBlocks) == 0) return false;
    for (uint64_t block = format::kMinDirectBlock; block <= format::kMaxDirectBlock; block *= 2) {
      if (size == (allocated_ + block - 1) / block * block) return true;
    }
    return false;
  }

  void apply_group() {
    for (const Pending& p : group_) apply(p);
    group_.clear();
  }

  // The image reaches at least to the end of `s`'s range (zeros until applied).
  void cover(const SectionHeader& s) {
    std::vector<std::byte>& out = image_.owned;
    if (out.size() < s.image_offset + s.image_length) out.resize(s.image_offset + s.image_length);
    chain_ = std::max(chain_, s.image_offset + s.image_length - std::min<uint64_t>(s.image_length, format::kMarkerSize));
  }

  void apply(const Pending& p) {
    const SectionHeader& s = p.s;
    count(s, p.end - p.at);
    if (encrypted() && !gcm_) return;  // framing only: no key to open it with
    cover(s);
    std::span<std::byte> target{image_.owned.data() + s.image_offset, s.image_length};
    std::span<const std::byte> stored = file_.subspan(p.at + format::kSectionHeaderSize, s.stored_length);
    DamageKind failed = DamageKind::kBadCompressedData;
    bool ok = true;
    if (encrypted()) {
      // Raw sections decrypt straight into the image; compressed ones into
      // plain_ first. Either is zeroed below when the tag fails.
      const bool raw = (s.flags & format::kSectionRaw) != 0;
      const auto cipher = stored.first(stored.size() - format::kSectionTagSize);
      if (!raw) plain_.resize(cipher.size());
      std::byte* out = raw ? target.data() : plain_.data();
      ok = gcm_->open(section_nonce(header_.id, s.counter), section_aad(file_.data() + p.at, header_.id, p.at),
                      cipher, out, cipher.data() + cipher.size());
      failed = DamageKind::kBadSectionTag;
      stored = raw ? std::span<const std::byte>() : std::span<const std::byte>(plain_);
      if (!raw && !ok) std::fill(plain_.begin(), plain_.end(), std::byte{0});
    } else if ((s.flags & format::kSectionRaw) != 0) {
      std::memcpy(target.data(), stored.data(), stored.size());
      stored = {};
    }
    if (ok && !stored.empty() && !lz4_decompress(stored, target)) ok = false;
    if (!ok) {
      std::fill(target.begin(), target.end(), std::byte{0});
      image_.damage.push_back({p.at, p.end - p.at, failed, flush_start_after(p.end), s.image_offset, s.image_length});
    }
  }

  void count(const SectionHeader& s, uint64_t file_bytes) {
    ++image_.sections;
    image_.stored_bytes += file_bytes;
    image_.image_bytes += s.image_length;
  }

  std::span<const std::byte> file_;
  const uint64_t file_size_;  // of the whole file, of which file_ may hold the first bytes
  const SegmentHeader& header_;
  SegmentImage& image_;
  std::vector<Pending> group_;  // read, checked, not applied yet
  bool broken_ = false;         // after damage, until the next flush starts
  // The image offset where the next flush's range starts: the open marker
  // the last applied flush left.
  uint64_t chain_ = format::kFirstMarkerOffset;
  uint64_t allocated_;  // the file size the writer has allocated so far
  std::unique_ptr<crypto::Gcm> gcm_;  // encrypted: the segment's data key, when opened
  std::vector<std::byte> plain_;      // a compressed section, decrypted
  bool ends_in_fragment_ = false;  // the walk ended on fewer bytes than a section header
};

}  // namespace

const char* damage_kind_name(DamageKind kind) {
  switch (kind) {
    case DamageKind::kBadMarker: return "bad sync marker";
    case DamageKind::kZeroedMarker: return "zeroed sync marker, sealed data after it";
    case DamageKind::kUnsealedBytes: return "unsealed bytes after the last marker";
    case DamageKind::kBadEntryHeader: return "bad entry header checksum";
    case DamageKind::kBadPayloadChecksum: return "bad payload checksum";
    case DamageKind::kEntryOverrunsSection: return "entry overruns its sync section";
    case DamageKind::kTruncated: return "file truncated";
    case DamageKind::kBadSectionHeader: return "bad compressed section header";
    case DamageKind::kZeroedSectionHeader: return "zeroed compressed section header";
    case DamageKind::kBadSectionChecksum: return "bad compressed section checksum";
    case DamageKind::kBadCompressedData: return "compressed section does not decompress";
    case DamageKind::kIncompleteFlushGroup: return "flush group without its last section";
    case DamageKind::kBadSeal: return "damaged seal (where the segment's data ends)";
    case DamageKind::kBadKeyBlock: return "bad key block (the wrapped data key)";
    case DamageKind::kBadSectionTag: return "encrypted section fails authentication";
    case DamageKind::kBadEntryTag: return "encrypted entry fails authentication";
    case DamageKind::kEndsBeforeSeal: return "data ends before the end its seal records";
    case DamageKind::kLongerThanWritten: return "file longer than any writer makes a segment of its capacity";
  }
  return "unknown";
}

// A plain segment's file is its capacity (mapped, standard, a spare), or in
// direct mode that rounded up to its block, at most kMaxDirectBlock.
// A compressed segment's file holds its header and key block, its sections
// and the allocation ahead of them (CompressedStorage, segment_storage.cc):
//  - A flush stores its image range [M, E) of L bytes as a group of sections
//    that partition it: the ranges between direct payloads and the payloads,
//    2d + 1 sections for d of them. A section takes align_up(40 + stored)
//    bytes and stores at most its range (LZ4 only where it shrinks) and a
//    16-byte tag, so at most 64 bytes more than its range. Each payload has
//    an entry of its own whose 32-byte header lies in [M, E): d < L / 32,
//    and a flush takes at most 5L + 64.
//  - The next flush starts at the open marker, E - 16, and but for the close
//    a seal moves that marker past at least one entry and a marker, 48 bytes
//    (MappedSegment::seal()). So F flushes number at most C / 48 + 1 for a
//    capacity of C, their ranges sum to at most C + 16F, and their sections
//    take at most 5 (4C / 3 + 16) + 64F <= 8C + 144 bytes.
//  - Allocation runs ahead of the sections by one step, 1 MiB or a section's
//    footprint (at most C + 64); a growth that failed part of the way may
//    leave part of one more; whole blocks round up by less than 64 KiB.
// 10C + 4 MiB covers all of that, and any file a writer leaves.
uint64_t segment_read_limit(const SegmentHeader& header) {
  const uint64_t capacity = std::min(header.capacity, format::kMaxCapacity);
  if ((header.flags & format::kFlagLz4Sections) == 0) {
    return (capacity + format::kMaxDirectBlock - 1) / format::kMaxDirectBlock * format::kMaxDirectBlock;
  }
  return 10 * capacity + (uint64_t{4} << 20);
}

SegmentImage load_segment_image(std::span<const std::byte> file, const SegmentHeader& header,
                                const KeyProvider* keys, std::optional<uint64_t> file_size) {
  SegmentImage image;
  image.capacity = header.capacity;
  if ((header.flags & format::kFlagLz4Sections) == 0) {
    image.bytes = file.first(std::min<uint64_t>(file.size(), header.capacity));
    image.truncated = file.size() < header.capacity;
    if (format::seals_entries(header.flags)) {
      const crypto::OpenedSegmentKey opened = open_key(file, header, keys, image);
      // Without its key block nothing in the segment can be told apart.
      if (!opened.block_intact) image.bytes = file.first(std::min<uint64_t>(file.size(), format::kKeyBlockOffset));
      if (opened.data_key) image.entry_key = std::make_shared<crypto::Gcm>(*opened.data_key);
    }
    return image;
  }
  ImageBuilder(file, std::max<uint64_t>(file.size(), file_size.value_or(0)), header, image).run(keys);
  image.bytes = image.owned;
  return image;
}

}  // namespace commitlog
