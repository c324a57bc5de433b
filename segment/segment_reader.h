// Reads one segment file's bytes: the header, then the sealed sections and
// their entries, checking every checksum. It never hands out a payload whose
// checksum failed.
//
// next() yields, in file order, intact entries and damage; then one End.
// After damage the reader resumes at the next place it can trust (the next
// section when an entry's length is known, else the next valid marker found by
// scanning forward), so a caller that wants strict behaviour stops at the
// first Damage and one that skips keeps calling next().
//
// Whether a torn tail is normal depends on whether this is the newest segment
// of the log; the reader only reports what it saw, the replayer decides.
//
// Lifetime: `bytes` must outlive the reader. Not thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "commitlog/status.h"
#include "segment/codec.h"

namespace commitlog {

struct SegmentEntry {
  uint64_t offset = 0;  // where the entry starts in the segment
  uint32_t table = 0;
  uint64_t time_us = 0;
  std::span<const std::byte> payload;
};

enum class DamageKind {
  kBadMarker,
  kBadEntryHeader,
  kBadPayloadChecksum,
  kEntryOverrunsSection,
  kBadSectionHeader,    // compressed segments: a section header checksum failed
  kBadSectionChecksum,  // compressed segments: the stored bytes' checksum failed
  kBadCompressedData,   // compressed segments: LZ4 rejected the stored bytes
};
const char* damage_kind_name(DamageKind kind);

struct SegmentDamage {
  uint64_t offset = 0;         // where the damage starts
  uint64_t skipped_bytes = 0;  // bytes passed over to resume
  DamageKind kind = DamageKind::kBadMarker;
  // Nothing valid follows the damage in this file but, at most, the
  // end-of-segment marker the same seal wrote: a power loss during the last
  // seal's flush may leave this (the marker's page written, an entry's not),
  // so in the newest segment of a run it is a torn tail, not corruption.
  bool in_last_section = false;
  // format::kFlagSyncedMarks only: no valid marker at or after the damage
  // records a completed flush that covered it. Sealed sections need not be
  // flushed (periodic), so a power loss may have torn it while keeping a
  // later section whole; in the newest segment of a run it is a torn tail.
  // Where a later marker proves the bytes durable, it is real damage.
  bool unflushed = false;
};

enum class EndKind {
  kClosed,     // an end-of-segment marker: the segment was finished cleanly
  kEndOfData,  // a zero marker: sealed data ends here
  kTorn,       // a damaged marker with nothing valid after it, or end of file
};
const char* end_kind_name(EndKind kind);

struct SegmentEnd {
  EndKind kind = EndKind::kEndOfData;
  uint64_t offset = 0;        // where the sealed data ends
  uint64_t unsealed_bytes = 0;  // non-zero bytes after `offset` that are not sealed data
  uint64_t sections = 0;      // valid sections seen
};

using SegmentItem = std::variant<SegmentEntry, SegmentDamage, SegmentEnd>;

class SegmentReader {
 public:
  // `bytes` is the whole file; its header must already have parsed cleanly.
  SegmentReader(std::span<const std::byte> bytes, const SegmentHeader& header);
  // Starts at the section containing `offset` instead of the first one;
  // entries before `offset` are not returned.
  void skip_to(uint64_t offset) { skip_before_ = offset; }

  SegmentItem next();

  // The sync section that the last SegmentEntry, or SegmentDamage other than
  // kBadMarker, came from: its marker's offset and the next marker's. For
  // tools that show a segment's layout (commitlog dump).
  // `synced`: what its marker records as durable (format::kFlagSyncedMarks).
  struct Section {
    uint64_t marker = 0;
    uint64_t next_marker = 0;
    std::optional<uint64_t> synced;
  };
  Section section() const;

 private:
  bool valid_marker_at(uint64_t at, Marker* marker) const;
  bool zero_at(uint64_t at, uint64_t length) const;
  uint64_t find_marker_after(uint64_t from) const;
  bool unflushed(uint64_t damage_at);
  uint64_t count_unsealed(uint64_t from) const;
  SegmentItem enter_section(uint64_t marker_at);

  std::span<const std::byte> bytes_;
  SegmentHeader header_;
  uint64_t skip_before_ = 0;
  uint64_t marker_ = 0;        // the current section's marker
  uint64_t section_end_ = 0;   // the next marker's offset
  uint64_t section_synced_ = 0;  // the current section's marker's synced
  uint64_t cursor_ = 0;        // next entry inside the section
  bool in_section_ = false;
  bool ended_ = false;
  SegmentEnd end_;
  uint64_t sections_ = 0;
  // unflushed(): where its probes started, and the valid markers from there
  // on, each with the largest synced of it and the markers after it.
  std::optional<uint64_t> scanned_from_;
  std::vector<std::pair<uint64_t, uint64_t>> synced_after_;
};

}  // namespace commitlog
