// SPDX-License-Identifier: Apache-2.0
// Encoding and decoding of a segment's four structures (layout in format.h):
// the file header, the sync marker, the entry header and the compressed
// section header. The writer and every reader go through these functions, so
// each layout is written down once, as LevelDB's log_format.h is shared by
// its log writer and reader.
//
// Every decoder checks the structure's own checksum, which mixes in the
// segment id and the offset the structure sits at (checksum.h), and the
// bounds a writer never exceeds; a decoder reads exactly the structure's
// bytes at the pointer it is given and never more.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "segment/format.h"

namespace commitlog {

struct SegmentHeader {
  uint16_t version = 0;
  uint16_t flags = 0;
  uint64_t id = 0;
  uint64_t created_us = 0;
  uint64_t capacity = 0;     // the file size the writer preallocated
  uint64_t previous_id = 0;  // segment written before this one by the same process, or 0
  // Version 2 (format::kHeaderSealOffset): where the segment's bytes are
  // final, or 0 while no seal is written. seal_damaged: its bytes are
  // neither zero nor a seal that checks out, so sealed_end is 0.
  uint64_t sealed_end = 0;
  bool seal_damaged = false;
};

enum class HeaderProblem {
  kNone,
  kAllZero,         // header never written (a crash while the file was made)
  kTooShort,        // fewer bytes than a header, not all zero
  kNotASegment,     // wrong magic
  kBadChecksum,     // header bytes damaged
  kUnknownVersion,  // intact, but a format version this build does not read
  kUnknownFlags,    // intact, but a feature this build does not know, or flags no build combines
  kCapacityOutOfRange,  // intact, but a capacity above format::kMaxCapacity
};
const char* header_problem_name(HeaderProblem problem);

// Writes the header, its checksum included, into the first kHeaderSize bytes
// of `out`; in version 2 with an empty seal (header.sealed_end is ignored).
void encode_segment_header(const SegmentHeader& header, std::span<std::byte, format::kHeaderSize> out);
// Checks the header at the start of a segment file. Fills `header` when the
// bytes are an intact header (kNone, kUnknownVersion, kUnknownFlags); a
// damaged seal does not make the header a problem (seal_damaged says so).
HeaderProblem decode_segment_header(std::span<const std::byte> bytes, SegmentHeader* header);
// decode_segment_header(), and kCapacityOutOfRange for an intact header whose
// capacity no writer makes: for the readers that size what they read of a
// file by its capacity (segment_image.h).
HeaderProblem decode_bounded_segment_header(std::span<const std::byte> bytes, SegmentHeader* header);
// The kSealSize bytes that go at format::kHeaderSealOffset of a version 2
// segment to record `sealed_end` (at least format::kFirstMarkerOffset).
void encode_seal(uint64_t sealed_end, uint64_t segment_id, std::span<std::byte, format::kSealSize> out);

struct Marker {
  uint64_t next = 0;    // offset of the next marker, or format::kEndOfSegment
  // With kFlagSyncedMarks: the segment was durable below this; else 0, and 0
  // for a version 1 end marker, which records nothing.
  uint64_t synced = 0;
};
// Writes the kMarkerSize bytes of a marker at `own_offset` of segment
// `segment_id` to `out`; `flags` are the segment's header flags.
void encode_marker(std::byte* out, const Marker& marker, uint64_t segment_id, uint64_t own_offset,
                   uint16_t flags);
// The marker in the kMarkerSize bytes at `in`, when its checksum holds for
// `own_offset` of `segment_id` and it could have been written there: `next`
// is the end of segment or an aligned offset after the marker, and `synced`
// does not exceed the marker's own offset. `next` is not checked against the
// segment's size.
std::optional<Marker> decode_marker(const std::byte* in, uint64_t segment_id, uint64_t own_offset,
                                    uint16_t flags);

struct EntryHeader {
  uint32_t length = 0;  // header and payload, unpadded
  uint32_t table = 0;
  uint64_t time_us = 0;
  uint64_t payload_checksum = 0;
  uint64_t payload_size() const { return length - format::kEntryHeaderSize; }
};
// Writes the kEntryHeaderSize bytes of an entry header at `own_offset` to `out`.
void encode_entry_header(std::byte* out, const EntryHeader& entry, uint64_t segment_id,
                         uint64_t own_offset);
// The table of the entry header at `in`, unchecked: for the writer, reading
// back an entry a producer of this process published.
uint32_t entry_table(const std::byte* in);
// The entry header in the kEntryHeaderSize bytes at `in`, when its checksum
// holds and its length covers at least the header.
std::optional<EntryHeader> decode_entry_header(const std::byte* in, uint64_t segment_id,
                                               uint64_t own_offset);

struct SectionHeader {
  uint64_t image_offset = 0;
  uint32_t image_length = 0;
  uint32_t stored_length = 0;
  uint32_t flags = 0;  // format::kSectionRaw, kSectionJoined, kSectionMore
  uint64_t stored_checksum = 0;
  uint32_t counter = 0;  // format::kFlagEncrypted: its write counter; else 0
};
// Writes the kSectionHeaderSize bytes of a section header at file offset
// `own_offset` to `out`.
void encode_section_header(std::byte* out, const SectionHeader& section, uint64_t segment_id,
                           uint64_t own_offset);
// The section header in the kSectionHeaderSize bytes at `in`, when its
// checksum holds, its flags are known to a segment with header flags
// `segment_flags`, a raw section stores exactly its image length (plus the
// tag, when encrypted), and its
// image range lies after the file header and within `capacity`. Whether its
// stored bytes fit the file is the caller's to check.
std::optional<SectionHeader> decode_section_header(const std::byte* in, uint64_t segment_id,
                                                   uint64_t own_offset, uint16_t segment_flags,
                                                   uint64_t capacity);

// An encrypted segment's key block (format::kKeyBlockOffset).
struct KeyBlock {
  uint32_t master_key_id = 0;
  std::array<std::byte, format::kWrappedKeySize> wrapped{};
};
void encode_key_block(std::byte* out, const KeyBlock& block, uint64_t segment_id);
// The key block in the kKeyBlockSize bytes at `in`, when its checksum holds
// and it names a cipher this build knows.
std::optional<KeyBlock> decode_key_block(const std::byte* in, uint64_t segment_id);

// The nonce and associated data of the encrypted section whose encoded
// header (format::kSectionHeaderSize bytes, counter included) is at `header`
// and sits at file offset `own_offset`: what binds its ciphertext to its
// segment, its place and its header (format.h).
std::array<std::byte, format::kSectionNonceSize> section_nonce(uint64_t segment_id, uint32_t counter);
std::array<std::byte, format::kSectionAadSize> section_aad(const std::byte* header, uint64_t segment_id,
                                                          uint64_t own_offset);
// The same for the sealed entry (format::kFlagSealedEntries) at `own_offset`
// whose header starts `length`, `table`, `time_us`.
std::array<std::byte, format::kSectionNonceSize> entry_nonce(uint64_t segment_id, uint64_t own_offset);
std::array<std::byte, format::kEntryAadSize> entry_aad(uint32_t length, uint32_t table, uint64_t time_us,
                                                      uint64_t segment_id, uint64_t own_offset);

}  // namespace commitlog
