// SPDX-License-Identifier: Apache-2.0
// The image of a segment file as the segment reader reads it, in which
// offsets are positions: for a plain segment the file's bytes themselves; for
// a compressed one the image rebuilt by checking and decompressing its
// sections in file order (format.h).
//
// Compressed sections. A flush is one section, or in kFlagFlushGroups
// segments a group of them, applied only once its last one is read. The
// writer makes a flush's section headers visible only once every earlier
// flush is durable, so a valid section header that starts a flush proves
// everything before it durable. Damage (a bad or zeroed header, a bad stored
// checksum, bytes that do not decompress) with such a section after it is
// therefore durable damage, and the walk resumes there; with none after it,
// it is the one flush a power loss may have torn, and the walk ends. 40 zero
// bytes where a header belongs end the sections only when nothing follows
// them but zeros. A damaged flush is left out of the image, whose bytes there
// stay as earlier flushes left them, so the reader finds the gap too.
//
// Encryption. The key block must check out; damage to it is durable (it is
// written with the header, before anything else). Each section's stored
// bytes are checked against their checksum first, so a flipped bit of
// ciphertext or tag is the same damage as in any compressed segment; bytes
// that check out but fail GCM's tag (kBadSectionTag) are left out like bytes
// that do not decompress. No decrypted byte of a failed section reaches the
// image.
//
// Truncation. A plain segment is preallocated to its capacity, so a shorter
// file was cut after the fact. A compressed file grows in steps of
// format::kCompressedAllocationStep that its sections determine, and a power
// loss may only undo whole steps, so a file shorter than its sections' steps
// was cut too. Either is durable damage. A file longer than its steps by
// zeros, short of one more step, holds a growth a full disk did not finish:
// no damage (segment_image.cc says why no cut looks like that).
//
// Bounds. No reader needs more of a file than segment_read_limit(): past
// it lies nothing a writer wrote, and reading a file whole would let any
// file with a segment's name cost its size in memory. Bytes past a plain
// segment's capacity are never read; a compressed file longer than the
// limit is durable damage (kLongerThanWritten) where the limit ends.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "commitlog/key_provider.h"
#include "segment/codec.h"

namespace commitlog {
namespace crypto {
class Gcm;
}  // namespace crypto

enum class DamageKind {
  kBadMarker,
  kZeroedMarker,           // a zero marker slot with valid sealed data after it
  kUnsealedBytes,          // non-zero bytes after the last sealed data
  kBadEntryHeader,
  kBadPayloadChecksum,
  kEntryOverrunsSection,
  kTruncated,              // the file is shorter than the writer made it
  kBadSectionHeader,       // compressed: a section header that does not check out
  kZeroedSectionHeader,    // compressed: zeros where a section header belongs, bytes after them
  kBadSectionChecksum,     // compressed: the stored bytes' checksum failed
  kBadCompressedData,      // compressed: LZ4 rejected the stored bytes
  kIncompleteFlushGroup,   // compressed: the file ends inside a flush's group of sections
  kBadSeal,                // the header's seal is neither empty nor valid
  kEndsBeforeSeal,         // the data ends before where the segment's seal says its bytes are final
  kBadKeyBlock,            // encrypted: the key block does not check out or is cut
  kBadSectionTag,          // encrypted: the stored bytes check out but do not decrypt under their key
  kBadEntryTag,            // sealed entries: the same for an entry's stored payload
  kLongerThanWritten,      // compressed: the file goes on past segment_read_limit()
};
const char* damage_kind_name(DamageKind kind);

// Damage to a compressed segment's sections, in file offsets.
struct SectionDamage {
  uint64_t file_offset = 0;  // the walk passed over [file_offset, file_offset + file_bytes)
  uint64_t file_bytes = 0;
  DamageKind kind = DamageKind::kBadSectionHeader;
  bool durable = false;      // a later flush follows it, so these bytes had been durable
  uint64_t image_at = 0;     // where the lost flush's range starts in the image
  uint64_t image_bytes = 0;  // that range's length, when its header was readable; else 0
};

struct SegmentImage {
  std::span<const std::byte> bytes;  // what the segment reader reads
  std::vector<std::byte> owned;      // the rebuilt image of a compressed segment
  uint64_t capacity = 0;             // from the header: positions lie below it
  // A plain segment's file is shorter than its capacity: bytes past
  // bytes.size() are missing, not unwritten.
  bool truncated = false;
  // Compressed: image bytes below this were written by flushes that a later
  // flush follows, so they were durable.
  uint64_t durable_below = 0;
  std::vector<SectionDamage> damage;  // compressed, in file order
  uint64_t sections = 0;              // valid compressed sections
  uint64_t stored_bytes = 0;          // file bytes of those sections
  uint64_t image_bytes = 0;           // image bytes they restore
  // Encrypted: the master key id its key block names, and why its sections
  // could not be opened when they could not (no keys given, an id the keys
  // lack, a key that does not unwrap the data key). Then only the framing
  // was checked (section headers, stored checksums): nothing is applied and
  // the image holds the header alone.
  std::optional<uint32_t> key_id;
  Status key_status;
  // Sealed entries (format::kFlagSealedEntries): the segment's data key,
  // when opened, for the segment reader to open each entry with.
  std::shared_ptr<crypto::Gcm> entry_key;
};

// The most bytes of a segment file with the intact `header` (capacity at
// most format::kMaxCapacity) that any writer makes, so the most a reader
// reads of it: a plain segment's capacity rounded up to the largest direct
// I/O block, a compressed segment's bound on what its sections can take.
uint64_t segment_read_limit(const SegmentHeader& header);

// `file` must outlive the result when the segment is not compressed.
// `keys`: the master keys for an encrypted segment; null when none are given.
// `file_size`: the size of the file when `file` holds only the first
// segment_read_limit() bytes of it; unset when it holds all of it.
SegmentImage load_segment_image(std::span<const std::byte> file, const SegmentHeader& header,
                                const KeyProvider* keys = nullptr,
                                std::optional<uint64_t> file_size = std::nullopt);

}  // namespace commitlog
