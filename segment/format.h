// SPDX-License-Identifier: Apache-2.0
// The on-disk format of a segment: the constants shared by writer and reader.
// segment/FORMAT.md has the grammar; this header is the single source of the
// numbers, and segment/codec.h the one encoder and decoder of the structures
// they lay out, shared by writer and reader. A change to any layout below bumps kFormatVersion, or comes with a
// header flag that older readers refuse (kKnownFlags).
//
//   offset 0                64               80
//   +-----------------------+----------------+---------+---------+-----+----------------+--
//   | file header (64 B)    | marker (16 B)  | entry   | entry   | ... | marker (16 B)  | ...
//   +-----------------------+----------------+---------+---------+-----+----------------+--
//                           |<------------ sync section ------------->|
//
//   marker:  u64 next_marker_offset | u64 checksum(next, segment id, own offset)
//            with kFlagSyncedMarks the first word is u32 next | u32 synced
//            (marker_word()), and the checksum covers that whole word.
//            next == kEndOfSegment: the segment was closed cleanly here.
//            all 16 bytes zero: clean end of sealed data.
//   entry:   u32 entry_length (header + payload, unpadded; never 0)
//            u32 table_id | u64 write_time_us | u64 payload_checksum
//            u64 header_checksum(bytes 0..24, segment id, own offset)
//            payload, zero padding to a multiple of 8
//
// All integers are little-endian. Checksums are XXH3-64 (segment/checksum.h).
#pragma once

#include <cstddef>
#include <cstdint>

namespace commitlog::format {

// Version 2 adds the seal (kHeaderSealOffset) and end markers that record
// their synced offset. Version 3 lets a file be reused for a new segment
// with its old bytes in place (recycled segments): past a segment's data
// may lie bytes of an earlier segment, which nothing validates for the new
// id, so a zero marker slot ends the data unless a valid entry of this
// segment follows it (stale_bytes_may_follow()). This build writes 3 and
// reads 1 to 3.
inline constexpr uint16_t kFormatVersion = 3;
inline constexpr uint16_t kOldestReadableVersion = 1;
// "CLOGSEG1" read as a little-endian u64.
inline constexpr uint64_t kMagic = 0x31474553474f4c43ULL;

inline constexpr uint16_t kFlagLz4Sections = 1u << 0;
// With kFlagLz4Sections: one flush may store several sections, tied together
// by kSectionJoined / kSectionMore (large payloads compressed by their
// producers, commitlog_ext_direct_write_threshold). Readers that do not know
// this bit refuse the segment instead of misreading it.
inline constexpr uint16_t kFlagFlushGroups = 1u << 1;
// Each marker also says up to where its segment was durable when it was
// written (marker_word()), so a reader can tell a torn unflushed tail from
// damage to flushed bytes. Needs capacities below 2^32. Set on every segment
// this build writes, plain or compressed.
inline constexpr uint16_t kFlagSyncedMarks = 1u << 2;
// With kFlagLz4Sections: the file is written in whole blocks of direct I/O
// (commitlog_disk_access_mode direct), so its size is what the sections
// allocated (kCompressedAllocationStep) rounded up to a block, a power of two
// from 4 KiB to kMaxDirectBlock. Readers that do not know this bit refuse the
// segment instead of taking it for a cut file.
inline constexpr uint16_t kFlagWholeBlocks = 1u << 3;
inline constexpr uint64_t kMinDirectBlock = 4096;
inline constexpr uint64_t kMaxDirectBlock = 64 * 1024;
// With kFlagLz4Sections: a key block follows the header (kKeyBlockOffset) and
// every section's stored bytes are sealed with AES-256-GCM under the data key
// it wraps (see the compressed segment layout below). Readers that do not know
// this bit refuse the segment instead of misreading ciphertext.
inline constexpr uint16_t kFlagEncrypted = 1u << 4;
// With kFlagEncrypted, without kFlagLz4Sections: the plain layout, a key
// block between the header and the first marker, and every entry's payload
// sealed by its producer (see sealed entries below), so that encrypted
// segments are written, recycled and read like plain ones. Readers that do
// not know this bit refuse the segment instead of handing out ciphertext.
inline constexpr uint16_t kFlagSealedEntries = 1u << 5;
inline constexpr uint16_t kKnownFlags = kFlagLz4Sections | kFlagFlushGroups | kFlagSyncedMarks | kFlagWholeBlocks |
                                        kFlagEncrypted | kFlagSealedEntries;

// File header.
inline constexpr size_t kHeaderSize = 64;
inline constexpr size_t kHeaderMagicOffset = 0;      // u64
inline constexpr size_t kHeaderVersionOffset = 8;    // u16
inline constexpr size_t kHeaderFlagsOffset = 10;     // u16
inline constexpr size_t kHeaderSizeOffset = 12;      // u32, = kHeaderSize
inline constexpr size_t kHeaderIdOffset = 16;        // u64 segment id
inline constexpr size_t kHeaderCreatedOffset = 24;   // u64 creation time, µs since the epoch
inline constexpr size_t kHeaderCapacityOffset = 32;  // u64 file size the writer preallocated
// u64 id of the segment the same process wrote just before this one, 0 for the
// first segment of a process: a torn tail is normal at the end of each run.
inline constexpr size_t kHeaderPreviousIdOffset = 40;
// Version 2: u32 sealed_end | u32 check, all zero until written. Where the
// segment's bytes are final: just past its end marker, written once that
// marker is durable; or, after its writer crashed, where the next process
// to open the log found its data to end. Outside the header checksum, which
// then covers bytes [0, 48): it is written after the header.
inline constexpr size_t kHeaderSealOffset = 48;
inline constexpr size_t kSealSize = 8;
inline constexpr size_t kHeaderChecksumOffset = 56;  // u64 XXH3-64 of bytes [0, 56), version 2: [0, 48)
constexpr size_t header_checksummed_bytes(uint16_t version) {
  return version >= 2 ? kHeaderSealOffset : kHeaderChecksumOffset;
}
constexpr bool stale_bytes_may_follow(uint16_t version) { return version >= 3; }

// Sync marker.
inline constexpr size_t kMarkerSize = 16;
inline constexpr uint64_t kEndOfSegment = ~uint64_t{0};
// kFlagSyncedMarks: a marker's first word packs `next` (bits 0..31) and
// `synced` (bits 32..63), the offset below which the segment was durable
// when the marker was written. An end-of-segment marker's `next` bits are all
// ones; in version 1 so are its `synced` bits (it records nothing).
inline constexpr uint64_t kEndNextBits = UINT32_MAX;
inline constexpr uint64_t kMaxSyncedMarksCapacity = UINT32_MAX;
// No writer makes a larger segment, with or without kFlagSyncedMarks: the
// readers that size their reads by a header's capacity take a larger one
// for damage (decode_bounded_segment_header()).
inline constexpr uint64_t kMaxCapacity = kMaxSyncedMarksCapacity;
constexpr uint64_t marker_word(uint64_t next, uint64_t synced) { return synced << 32 | next; }
constexpr uint64_t marker_next(uint64_t word) { return word & UINT32_MAX; }
constexpr uint64_t marker_synced(uint64_t word) { return word >> 32; }

// Entry.
inline constexpr size_t kAlignment = 8;
inline constexpr size_t kEntryHeaderSize = 32;
inline constexpr size_t kEntryLengthOffset = 0;           // u32
inline constexpr size_t kEntryTableOffset = 4;            // u32
inline constexpr size_t kEntryTimeOffset = 8;             // u64
inline constexpr size_t kEntryPayloadChecksumOffset = 16; // u64
inline constexpr size_t kEntryHeaderChecksumOffset = 24;  // u64
inline constexpr uint64_t kMaxEntryLength = UINT32_MAX;

constexpr uint64_t align_up(uint64_t n) { return (n + kAlignment - 1) & ~uint64_t{kAlignment - 1}; }
// Bytes an entry with `payload_size` bytes of payload takes in the segment.
constexpr uint64_t entry_footprint(uint64_t payload_size) {
  return align_up(kEntryHeaderSize + payload_size);
}
// The first marker sits right after the header (kFlagSealedEntries: after
// the key block, first_marker_offset()).
inline constexpr uint64_t kFirstMarkerOffset = kHeaderSize;
inline constexpr uint64_t kFirstEntryOffset = kFirstMarkerOffset + kMarkerSize;

// Compressed segments (kFlagLz4Sections). The writer builds the same image
// as above in memory; each flush stores the changed range of that image as a
// section, so positions mean the same with and without compression:
//
//   | file header (64 B) | section header (40 B) | stored bytes | pad | section header | ...
//
//   section header: u64 image_offset | u32 image_length | u32 stored_length
//                   u32 flags (kSectionRaw: stored uncompressed) | u32 zero
//                   u64 stored_checksum (XXH3-64 of the stored bytes)
//                   u64 header_checksum (bytes 0..32, segment id, own file offset)
//   all 40 bytes zero: end of sections.
// Sections may overlap in the image; a later one wins (the open marker is
// rewritten by the next flush). In kFlagFlushGroups segments a flush is a
// group of sections: kSectionJoined on all but its first, kSectionMore on all
// but its last (a one-section flush has neither, as in every other segment).
inline constexpr size_t kSectionHeaderSize = 40;
inline constexpr size_t kSectionImageOffset = 0;       // u64
inline constexpr size_t kSectionImageLength = 8;       // u32
inline constexpr size_t kSectionStoredLength = 12;     // u32
inline constexpr size_t kSectionFlags = 16;            // u32
inline constexpr size_t kSectionStoredChecksum = 24;   // u64
inline constexpr size_t kSectionHeaderChecksum = 32;   // u64
// A compressed segment's file grows in steps of min(this, capacity), or of a
// section's footprint when that is larger, each taken when the next section
// would reach past the file's end: a power loss may undo only whole steps, so
// readers can tell a cut file from a torn one (segment_image.h).
inline constexpr uint64_t kCompressedAllocationStep = 1 << 20;
inline constexpr uint32_t kSectionRaw = 1u << 0;
inline constexpr uint32_t kSectionJoined = 1u << 1;  // not the first of its flush
inline constexpr uint32_t kSectionMore = 1u << 2;    // not the last of its flush

// Encrypted segments (kFlagEncrypted). The key block sits between the file
// header and the first section:
//
//   key block: u32 master_key_id | u32 cipher (kCipherAes256Gcm)
//              u8[40] data key wrapped by the master key (RFC 3394 AES key wrap)
//              u64 zero | u64 checksum(bytes 0..56, segment id, own offset)
//
// A section's u32 `zero` field carries its write counter, unique among the
// segment's sections; its stored bytes are AES-256-GCM ciphertext of what an
// unencrypted section stores, followed by the tag (stored_length counts it).
// Nonce: segment id (u64) | counter (u32). Associated data: section header
// bytes 0..24 | segment id | the header's own file offset (kSectionAadSize).
inline constexpr size_t kKeyBlockOffset = kHeaderSize;
inline constexpr size_t kKeyBlockSize = 64;
inline constexpr size_t kKeyBlockIdOffset = 0;         // u32 master key id
inline constexpr size_t kKeyBlockCipherOffset = 4;     // u32
inline constexpr size_t kKeyBlockWrappedOffset = 8;    // u8[kWrappedKeySize]
inline constexpr size_t kKeyBlockChecksumOffset = 56;  // u64
inline constexpr uint32_t kCipherAes256Gcm = 1;
inline constexpr size_t kDataKeySize = 32;
inline constexpr size_t kWrappedKeySize = kDataKeySize + 8;
inline constexpr size_t kSectionCounter = 20;          // u32, encrypted segments
inline constexpr size_t kSectionTagSize = 16;
inline constexpr size_t kSectionNonceSize = 12;
inline constexpr size_t kSectionAadSize = 24 + 16;
// Where a segment's first section header sits.
constexpr uint64_t first_section_offset(uint16_t flags) {
  return (flags & kFlagEncrypted) != 0 ? kHeaderSize + kKeyBlockSize : kHeaderSize;
}

// Sealed entries (kFlagSealedEntries): the key block above sits at
// kKeyBlockOffset, the first marker after it. An entry's stored payload is
// the AES-256-GCM ciphertext of its payload followed by the tag;
// entry_length and payload_checksum cover those stored bytes, so framing
// and checksums read without the key. Nonce: segment id (u64) | the entry's
// offset (u32; offsets never repeat within a segment, and each segment has a
// data key of its own). Associated data: entry header bytes 0..16 (length,
// table, time) | segment id | the entry's offset (kEntryAadSize).
inline constexpr size_t kEntryAadSize = 16 + 16;
constexpr bool seals_entries(uint16_t flags) { return (flags & kFlagSealedEntries) != 0; }
constexpr uint64_t first_marker_offset(uint16_t flags) {
  return seals_entries(flags) ? kHeaderSize + kKeyBlockSize : kFirstMarkerOffset;
}
constexpr uint64_t first_entry_offset(uint16_t flags) { return first_marker_offset(flags) + kMarkerSize; }
// The bytes an entry stores for a payload of `payload_size`.
constexpr uint64_t stored_payload_size(uint64_t payload_size, uint16_t flags) {
  return seals_entries(flags) ? payload_size + kSectionTagSize : payload_size;
}

// Segment files are named CommitLog-<version>-<id>.log.
inline constexpr const char* kFilePrefix = "CommitLog-";
inline constexpr const char* kFileSuffix = ".log";
// A file kept for reuse as a segment: CommitLog-<id>.spare.
inline constexpr const char* kSpareSuffix = ".spare";

}  // namespace commitlog::format
