// SPDX-License-Identifier: Apache-2.0
#include "segment/codec.h"

#include <algorithm>
#include <cstring>

#include "segment/checksum.h"

namespace commitlog {
namespace {

bool synced_marks(uint16_t flags) { return (flags & format::kFlagSyncedMarks) != 0; }

}  // namespace

static_assert(format::kHeaderCapacityOffset == 32, "header_problem_name() names the offset");

const char* header_problem_name(HeaderProblem problem) {
  switch (problem) {
    case HeaderProblem::kNone: return "ok";
    case HeaderProblem::kAllZero: return "header never written (all zero)";
    case HeaderProblem::kTooShort: return "file shorter than a segment header";
    case HeaderProblem::kNotASegment: return "not a commit log segment (bad magic)";
    case HeaderProblem::kBadChecksum: return "segment header checksum mismatch";
    case HeaderProblem::kUnknownVersion: return "unknown segment format version";
    case HeaderProblem::kUnknownFlags: return "segment header has unknown flags, or flags no build combines";
    case HeaderProblem::kCapacityOutOfRange:
      return "segment header capacity (offset 32) of 4 GiB or more, which no writer makes";
  }
  return "unknown";
}

void encode_segment_header(const SegmentHeader& header, std::span<std::byte, format::kHeaderSize> out) {
  std::byte* h = out.data();
  std::memset(h, 0, format::kHeaderSize);
  store_u64(h + format::kHeaderMagicOffset, format::kMagic);
  store_u16(h + format::kHeaderVersionOffset, header.version);
  store_u16(h + format::kHeaderFlagsOffset, header.flags);
  store_u32(h + format::kHeaderSizeOffset, format::kHeaderSize);
  store_u64(h + format::kHeaderIdOffset, header.id);
  store_u64(h + format::kHeaderCreatedOffset, header.created_us);
  store_u64(h + format::kHeaderCapacityOffset, header.capacity);
  store_u64(h + format::kHeaderPreviousIdOffset, header.previous_id);
  store_u64(h + format::kHeaderChecksumOffset, checksum({h, format::header_checksummed_bytes(header.version)}));
}

namespace {

uint32_t seal_check(uint64_t sealed_end, uint64_t segment_id) {
  return static_cast<uint32_t>(marker_checksum(sealed_end, segment_id, format::kHeaderSealOffset));
}

// A seal other than all zeros must check out and lie where data can end.
void decode_seal(const std::byte* h, SegmentHeader* header) {
  const uint32_t end = load_u32(h + format::kHeaderSealOffset);
  const uint32_t check = load_u32(h + format::kHeaderSealOffset + 4);
  if (end == 0 && check == 0) return;
  if (check == seal_check(end, header->id) && end >= format::first_marker_offset(header->flags) &&
      end <= header->capacity) {
    header->sealed_end = end;
  } else {
    header->seal_damaged = true;
  }
}

// Whether `flags` are a combination some build writes. Flush groups and
// whole blocks belong to sections. An encrypted segment seals either its
// sections or its entries, so no header without either can pass ciphertext
// off as plain payloads; sealed entries are the plain layout's, with synced
// markers.
bool flags_combine(uint16_t flags) {
  const bool sections = (flags & format::kFlagLz4Sections) != 0;
  if (!sections && (flags & (format::kFlagFlushGroups | format::kFlagWholeBlocks)) != 0) return false;
  if ((flags & format::kFlagEncrypted) != 0 && sections == format::seals_entries(flags)) return false;
  if (format::seals_entries(flags)) {
    return (flags & (format::kFlagEncrypted | format::kFlagSyncedMarks)) ==
           (format::kFlagEncrypted | format::kFlagSyncedMarks);
  }
  return true;
}

}  // namespace

void encode_seal(uint64_t sealed_end, uint64_t segment_id, std::span<std::byte, format::kSealSize> out) {
  store_u32(out.data(), static_cast<uint32_t>(sealed_end));
  store_u32(out.data() + 4, seal_check(sealed_end, segment_id));
}

HeaderProblem decode_segment_header(std::span<const std::byte> bytes, SegmentHeader* header) {
  const auto prefix = bytes.first(std::min(bytes.size(), format::kHeaderSize));
  if (std::all_of(prefix.begin(), prefix.end(), [](std::byte b) { return b == std::byte{0}; })) {
    return HeaderProblem::kAllZero;
  }
  if (bytes.size() < format::kHeaderSize) return HeaderProblem::kTooShort;
  const std::byte* h = bytes.data();
  if (load_u64(h + format::kHeaderMagicOffset) != format::kMagic) return HeaderProblem::kNotASegment;
  // The version says what the checksum covers; a damaged version fails it.
  const uint16_t version = load_u16(h + format::kHeaderVersionOffset);
  if (load_u64(h + format::kHeaderChecksumOffset) !=
      checksum({h, format::header_checksummed_bytes(std::min(version, format::kFormatVersion))})) {
    return HeaderProblem::kBadChecksum;
  }
  header->version = version;
  header->flags = load_u16(h + format::kHeaderFlagsOffset);
  header->id = load_u64(h + format::kHeaderIdOffset);
  header->created_us = load_u64(h + format::kHeaderCreatedOffset);
  header->capacity = load_u64(h + format::kHeaderCapacityOffset);
  header->previous_id = load_u64(h + format::kHeaderPreviousIdOffset);
  header->sealed_end = 0;
  header->seal_damaged = false;
  if (header->version < format::kOldestReadableVersion || header->version > format::kFormatVersion ||
      load_u32(h + format::kHeaderSizeOffset) != format::kHeaderSize) {
    return HeaderProblem::kUnknownVersion;
  }
  if ((header->flags & ~format::kKnownFlags) != 0) return HeaderProblem::kUnknownFlags;
  if (!flags_combine(header->flags)) return HeaderProblem::kUnknownFlags;
  if (header->version >= 2) decode_seal(h, header);
  return HeaderProblem::kNone;
}

HeaderProblem decode_bounded_segment_header(std::span<const std::byte> bytes, SegmentHeader* header) {
  const HeaderProblem problem = decode_segment_header(bytes, header);
  if (problem == HeaderProblem::kNone && header->capacity > format::kMaxCapacity) {
    return HeaderProblem::kCapacityOutOfRange;
  }
  return problem;
}

void encode_marker(std::byte* out, const Marker& marker, uint64_t segment_id, uint64_t own_offset,
                   uint16_t flags) {
  const bool end = marker.next == format::kEndOfSegment;
  const uint64_t word = !synced_marks(flags) ? marker.next
                        : end                ? format::marker_word(format::kEndNextBits, marker.synced)
                                             : format::marker_word(marker.next, marker.synced);
  store_u64(out, word);
  store_u64(out + 8, marker_checksum(word, segment_id, own_offset));
}

std::optional<Marker> decode_marker(const std::byte* in, uint64_t segment_id, uint64_t own_offset,
                                    uint16_t flags) {
  const uint64_t word = load_u64(in);
  Marker marker{word, 0};
  if (synced_marks(flags) && word != format::kEndOfSegment) {
    marker = {format::marker_next(word), format::marker_synced(word)};
    if (marker.next == format::kEndNextBits) marker.next = format::kEndOfSegment;
    // Nothing above a marker is durable before the marker itself is written.
    if (marker.synced > own_offset) return std::nullopt;
  }
  if (marker.next != format::kEndOfSegment &&
      (marker.next < own_offset + format::kMarkerSize || marker.next % format::kAlignment != 0)) {
    return std::nullopt;
  }
  if (load_u64(in + 8) != marker_checksum(word, segment_id, own_offset)) return std::nullopt;
  return marker;
}

void encode_entry_header(std::byte* out, const EntryHeader& entry, uint64_t segment_id,
                         uint64_t own_offset) {
  store_u32(out + format::kEntryLengthOffset, entry.length);
  store_u32(out + format::kEntryTableOffset, entry.table);
  store_u64(out + format::kEntryTimeOffset, entry.time_us);
  store_u64(out + format::kEntryPayloadChecksumOffset, entry.payload_checksum);
  store_u64(out + format::kEntryHeaderChecksumOffset, entry_header_checksum(out, segment_id, own_offset));
}

uint32_t entry_table(const std::byte* in) { return load_u32(in + format::kEntryTableOffset); }

std::optional<EntryHeader> decode_entry_header(const std::byte* in, uint64_t segment_id,
                                               uint64_t own_offset) {
  if (load_u64(in + format::kEntryHeaderChecksumOffset) != entry_header_checksum(in, segment_id, own_offset)) {
    return std::nullopt;
  }
  EntryHeader entry{load_u32(in + format::kEntryLengthOffset), load_u32(in + format::kEntryTableOffset),
                    load_u64(in + format::kEntryTimeOffset),
                    load_u64(in + format::kEntryPayloadChecksumOffset)};
  if (entry.length < format::kEntryHeaderSize) return std::nullopt;
  return entry;
}

void encode_section_header(std::byte* out, const SectionHeader& section, uint64_t segment_id,
                           uint64_t own_offset) {
  std::memset(out, 0, format::kSectionHeaderSize);
  store_u64(out + format::kSectionImageOffset, section.image_offset);
  store_u32(out + format::kSectionImageLength, section.image_length);
  store_u32(out + format::kSectionStoredLength, section.stored_length);
  store_u32(out + format::kSectionFlags, section.flags);
  store_u32(out + format::kSectionCounter, section.counter);
  store_u64(out + format::kSectionStoredChecksum, section.stored_checksum);
  store_u64(out + format::kSectionHeaderChecksum, section_header_checksum(out, segment_id, own_offset));
}

std::optional<SectionHeader> decode_section_header(const std::byte* in, uint64_t segment_id,
                                                   uint64_t own_offset, uint16_t segment_flags,
                                                   uint64_t capacity) {
  if (load_u64(in + format::kSectionHeaderChecksum) != section_header_checksum(in, segment_id, own_offset)) {
    return std::nullopt;
  }
  SectionHeader s{load_u64(in + format::kSectionImageOffset), load_u32(in + format::kSectionImageLength),
                  load_u32(in + format::kSectionStoredLength), load_u32(in + format::kSectionFlags),
                  load_u64(in + format::kSectionStoredChecksum), load_u32(in + format::kSectionCounter)};
  const bool encrypted = (segment_flags & format::kFlagEncrypted) != 0;
  const uint64_t tag = encrypted ? format::kSectionTagSize : 0;
  const uint32_t known = (segment_flags & format::kFlagFlushGroups) != 0
                             ? format::kSectionRaw | format::kSectionJoined | format::kSectionMore
                             : format::kSectionRaw;
  const bool fits = s.image_offset >= format::kHeaderSize && s.image_offset <= capacity &&
                    s.image_length <= capacity - s.image_offset;
  const bool raw_ok = (s.flags & format::kSectionRaw) != 0 ? s.stored_length == s.image_length + tag
                                                          : s.stored_length >= tag;
  if (!fits || (s.flags & ~known) != 0 || !raw_ok) return std::nullopt;
  return s;
}

void encode_key_block(std::byte* out, const KeyBlock& block, uint64_t segment_id) {
  std::memset(out, 0, format::kKeyBlockSize);
  store_u32(out + format::kKeyBlockIdOffset, block.master_key_id);
  store_u32(out + format::kKeyBlockCipherOffset, format::kCipherAes256Gcm);
  std::memcpy(out + format::kKeyBlockWrappedOffset, block.wrapped.data(), block.wrapped.size());
  store_u64(out + format::kKeyBlockChecksumOffset, key_block_checksum(out, segment_id, format::kKeyBlockOffset));
}

std::optional<KeyBlock> decode_key_block(const std::byte* in, uint64_t segment_id) {
  if (load_u64(in + format::kKeyBlockChecksumOffset) != key_block_checksum(in, segment_id, format::kKeyBlockOffset) ||
      load_u32(in + format::kKeyBlockCipherOffset) != format::kCipherAes256Gcm) {
    return std::nullopt;
  }
  KeyBlock block;
  block.master_key_id = load_u32(in + format::kKeyBlockIdOffset);
  std::memcpy(block.wrapped.data(), in + format::kKeyBlockWrappedOffset, block.wrapped.size());
  return block;
}

std::array<std::byte, format::kSectionNonceSize> section_nonce(uint64_t segment_id, uint32_t counter) {
  std::array<std::byte, format::kSectionNonceSize> nonce;
  store_u64(nonce.data(), segment_id);
  store_u32(nonce.data() + 8, counter);
  return nonce;
}

namespace {

// `fields` (N - 16 bytes), then the segment id and the offset they sit at.
template <size_t N>
std::array<std::byte, N> bound_to_place(const std::byte* fields, uint64_t segment_id, uint64_t own_offset) {
  std::array<std::byte, N> aad;
  std::memcpy(aad.data(), fields, N - 16);
  store_u64(aad.data() + N - 16, segment_id);
  store_u64(aad.data() + N - 8, own_offset);
  return aad;
}

}  // namespace

std::array<std::byte, format::kSectionAadSize> section_aad(const std::byte* header, uint64_t segment_id,
                                                          uint64_t own_offset) {
  return bound_to_place<format::kSectionAadSize>(header, segment_id, own_offset);
}

// Offsets fit in 32 bits: sealed entries come with kFlagSyncedMarks.
std::array<std::byte, format::kSectionNonceSize> entry_nonce(uint64_t segment_id, uint64_t own_offset) {
  return section_nonce(segment_id, static_cast<uint32_t>(own_offset));
}

std::array<std::byte, format::kEntryAadSize> entry_aad(uint32_t length, uint32_t table, uint64_t time_us,
                                                      uint64_t segment_id, uint64_t own_offset) {
  std::byte fields[format::kEntryAadSize - 16];
  store_u32(fields + format::kEntryLengthOffset, length);
  store_u32(fields + format::kEntryTableOffset, table);
  store_u64(fields + format::kEntryTimeOffset, time_us);
  return bound_to_place<format::kEntryAadSize>(fields, segment_id, own_offset);
}

}  // namespace commitlog
