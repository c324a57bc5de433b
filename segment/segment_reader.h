// SPDX-License-Identifier: Apache-2.0
// Reads one segment image (segment_image.h): its sync sections and their
// entries, checking every checksum. It never hands out a payload whose
// checksum failed.
//
// next() yields, in offset order, intact entries and damaged regions, then
// one End (and End again on every later call). Each region is exact: the
// reader passed over [offset, offset + length) and resumes right after it —
// after a bad payload at the next entry, after a bad entry header at the next
// marker, after a bad or zeroed marker at the next valid marker found by
// scanning forward. Non-zero bytes after the last sealed data, and a file cut
// short, are regions too; in a version 3 segment, bytes after a zero marker
// slot are one only when an entry of this segment starts right after it (else
// they are a recycled file's earlier contents, and the data ends there). So a caller that wants to stop at the first damage
// stops, and one that skips keeps calling next().
//
// A damaged seal (format::kHeaderSealOffset) is the first region, and data
// that ends before its seal says is a region from there to the seal.
//
// Each region says whether it is durable (damage_classifier.h: a later write
// proves its bytes had been made durable). Whether damage that is not durable
// is a normal torn tail depends on whether this is the newest segment of its
// run, which the reader cannot know: the replayer decides.
//
// Lifetime: `image` must outlive the reader. Not thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <variant>
#include <vector>

#include "segment/codec.h"
#include "segment/damage_classifier.h"
#include "segment/segment_image.h"

namespace commitlog {

struct SegmentEntry {
  uint64_t offset = 0;  // where the entry starts in the segment: its position
  uint64_t next = 0;    // where the entry after it may start
  uint32_t table = 0;
  uint64_t time_us = 0;
  // Valid until the next call to next(). Sealed entries
  // (format::kFlagSealedEntries) read without their key (no
  // SegmentImage::entry_key): empty, only their framing and checksums were
  // checked; callers that hand payloads out check SegmentImage::key_status.
  std::span<const std::byte> payload;
};

struct SegmentDamage {
  uint64_t offset = 0;  // the first byte passed over
  uint64_t length = 0;  // bytes passed over: the reader resumes at offset + length
  DamageKind kind = DamageKind::kBadMarker;
  bool durable = false;  // a later write proves these bytes had been durable
};

enum class EndKind {
  kClosed,     // an end-of-segment marker: the segment was finished cleanly
  kEndOfData,  // a zero marker slot with nothing but zeros after it
  kTorn,       // the data ends in damage (reported before the End) with nothing valid after it
};
const char* end_kind_name(EndKind kind);

struct SegmentEnd {
  EndKind kind = EndKind::kEndOfData;
  uint64_t offset = 0;    // where the sealed data ends
  uint64_t sections = 0;  // valid sections seen
};

using SegmentItem = std::variant<SegmentEntry, SegmentDamage, SegmentEnd>;

class SegmentReader {
 public:
  // `header` must have decoded cleanly (HeaderProblem::kNone).
  SegmentReader(const SegmentImage& image, const SegmentHeader& header);
  // Starts at the section containing `offset` instead of the first one;
  // entries before `offset` are not returned.
  void skip_to(uint64_t offset) { skip_before_ = offset; }

  SegmentItem next();

  // The sync section that the last SegmentEntry, or SegmentDamage inside a
  // section, came from: its marker's offset and the next marker's, and what
  // its marker records as durable (format::kFlagSyncedMarks). For tools that
  // show a segment's layout (commitlog dump).
  struct Section {
    uint64_t marker = 0;
    uint64_t next_marker = 0;
    std::optional<uint64_t> synced;
  };
  Section section() const;

 private:
  // At the marker slot marker_: enters its section (nullopt) or yields what ends the data there.
  std::optional<SegmentItem> enter_section();
  // Whether a valid entry header of this segment starts right after the
  // marker slot at `marker`: unsealed appends, not stale bytes.
  bool entry_follows(uint64_t marker) const;
  SegmentItem read_entry();
  SegmentItem damage(uint64_t at, uint64_t length, DamageKind kind);
  // The data ends at `at`; a file cut short is reported first.
  SegmentItem finish(uint64_t at, EndKind kind);
  SegmentItem truncated_at(uint64_t at);
  bool available(uint64_t at, uint64_t length) const { return at + length <= image_.bytes.size(); }

  const SegmentImage& image_;
  const SegmentHeader header_;
  DamageClassifier classifier_;
  uint64_t skip_before_ = 0;
  uint64_t marker_;             // the current section's marker slot
  uint64_t section_end_ = 0;                      // the next marker's offset
  uint64_t section_synced_ = 0;                   // the current section's marker's synced
  uint64_t cursor_ = 0;                           // next entry inside the section
  bool in_section_ = false;
  uint64_t sections_ = 0;
  std::optional<SegmentEnd> end_;  // once known; returned after any damage before it
  bool seal_reported_ = false;
  std::vector<std::byte> opened_;  // sealed entries: the last payload, decrypted
};

}  // namespace commitlog
