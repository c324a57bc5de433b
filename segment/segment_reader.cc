// SPDX-License-Identifier: Apache-2.0
#include "segment/segment_reader.h"

#include <algorithm>

#include "segment/checksum.h"
#include "segment/crypto/cipher.h"
#include "segment/format.h"

namespace commitlog {
namespace {

bool zero_at(std::span<const std::byte> bytes, uint64_t at, uint64_t length) {
  const auto* p = bytes.data() + at;
  return std::all_of(p, p + length, [](std::byte b) { return b == std::byte{0}; });
}

}  // namespace

const char* end_kind_name(EndKind kind) {
  switch (kind) {
    case EndKind::kClosed: return "closed";
    case EndKind::kEndOfData: return "end of data";
    case EndKind::kTorn: return "torn";
  }
  return "unknown";
}

SegmentReader::SegmentReader(const SegmentImage& image, const SegmentHeader& header)
    : image_(image), header_(header), classifier_(image, header), marker_(format::first_marker_offset(header.flags)) {}

SegmentReader::Section SegmentReader::section() const {
  Section s{marker_, section_end_, std::nullopt};
  if ((header_.flags & format::kFlagSyncedMarks) != 0) s.synced = section_synced_;
  return s;
}

SegmentItem SegmentReader::damage(uint64_t at, uint64_t length, DamageKind kind) {
  return SegmentDamage{at, length, kind, classifier_.durable(at)};
}

SegmentItem SegmentReader::finish(uint64_t at, EndKind kind) {
  end_ = SegmentEnd{kind, at, sections_};
  // The seal was written once everything below it was durable.
  const uint64_t reached = kind == EndKind::kClosed ? at + format::kMarkerSize : at;
  if (reached < header_.sealed_end) {
    return SegmentDamage{reached, header_.sealed_end - reached, DamageKind::kEndsBeforeSeal, true};
  }
  if (!image_.truncated) return *end_;
  // The chain ended before the cut, but what the cut took may have held data.
  const uint64_t size = image_.bytes.size();
  return SegmentDamage{size, image_.capacity - size, DamageKind::kTruncated, true};
}

SegmentItem SegmentReader::truncated_at(uint64_t at) {
  end_ = SegmentEnd{EndKind::kTorn, at, sections_};
  return SegmentDamage{at, image_.capacity - at, DamageKind::kTruncated, true};
}

std::optional<SegmentItem> SegmentReader::enter_section() {
  const uint64_t at = marker_;
  if (!available(at, format::kMarkerSize)) {
    return image_.truncated ? truncated_at(at) : finish(at, EndKind::kEndOfData);
  }
  if (auto marker = classifier_.marker_at(at)) {
    ++sections_;
    if (marker->next == format::kEndOfSegment) return finish(at, EndKind::kClosed);
    in_section_ = true;
    cursor_ = at + format::kMarkerSize;
    section_end_ = marker->next;
    section_synced_ = marker->synced;
    return std::nullopt;
  }
  const bool zeroed = zero_at(image_.bytes, at, format::kMarkerSize);
  const uint64_t resume = classifier_.next_marker(at + format::kAlignment);
  if (resume != UINT64_MAX) {
    marker_ = resume;
    return damage(at, resume - at, zeroed ? DamageKind::kZeroedMarker : DamageKind::kBadMarker);
  }
  const uint64_t end = classifier_.nonzero_end(at);
  if (end == at) return finish(at, EndKind::kEndOfData);
  if (image_.truncated) return truncated_at(at);
  if (zeroed && format::stale_bytes_may_follow(header_.version) && !entry_follows(at)) {
    // A recycled file's earlier contents, or an append torn before its
    // header was whole: nothing of this segment, and nothing acknowledged.
    return finish(at, EndKind::kEndOfData);
  }
  end_ = SegmentEnd{EndKind::kTorn, at, sections_};
  return damage(at, end - at, zeroed ? DamageKind::kUnsealedBytes : DamageKind::kBadMarker);
}

bool SegmentReader::entry_follows(uint64_t marker) const {
  const uint64_t at = marker + format::kMarkerSize;
  return available(at, format::kEntryHeaderSize) &&
         decode_entry_header(image_.bytes.data() + at, header_.id, at).has_value();
}

SegmentItem SegmentReader::read_entry() {
  const uint64_t at = cursor_;
  const uint64_t rest = section_end_ - at;
  // After damage inside a section its marker still says where the next
  // section starts; the entry's own length cannot be trusted.
  auto rest_of_section = [&](DamageKind kind) {
    cursor_ = section_end_;
    return damage(at, rest, kind);
  };
  if (rest < format::kEntryHeaderSize) return rest_of_section(DamageKind::kEntryOverrunsSection);
  if (!available(at, format::kEntryHeaderSize)) {
    return image_.truncated ? truncated_at(at) : rest_of_section(DamageKind::kBadEntryHeader);
  }
  const std::byte* e = image_.bytes.data() + at;
  const auto header = decode_entry_header(e, header_.id, at);
  if (!header) return rest_of_section(DamageKind::kBadEntryHeader);
  const uint64_t footprint = format::align_up(header->length);
  if (footprint > rest) return rest_of_section(DamageKind::kEntryOverrunsSection);
  if (!available(at, header->length)) {
    return image_.truncated ? truncated_at(at) : rest_of_section(DamageKind::kEntryOverrunsSection);
  }
  cursor_ = at + footprint;
  std::span<const std::byte> payload{e + format::kEntryHeaderSize, header->payload_size()};
  if (header->payload_checksum != checksum(payload)) {
    return damage(at, footprint, DamageKind::kBadPayloadChecksum);
  }
  if (format::seals_entries(header_.flags)) {
    if (payload.size() < format::kSectionTagSize) return damage(at, footprint, DamageKind::kBadEntryTag);
    const auto cipher = payload.first(payload.size() - format::kSectionTagSize);
    payload = {};
    if (image_.entry_key) {
      opened_.resize(cipher.size());
      if (!image_.entry_key->open(entry_nonce(header_.id, at),
                                  entry_aad(header->length, header->table, header->time_us, header_.id, at), cipher,
                                  opened_.data(), cipher.data() + cipher.size())) {
        return damage(at, footprint, DamageKind::kBadEntryTag);
      }
      payload = opened_;
    }
  }
  return SegmentEntry{at, cursor_, header->table, header->time_us, payload};
}

SegmentItem SegmentReader::next() {
  if (header_.seal_damaged && !seal_reported_) {
    seal_reported_ = true;
    return SegmentDamage{format::kHeaderSealOffset, format::kSealSize, DamageKind::kBadSeal, true};
  }
  while (!end_) {
    if (!in_section_) {
      if (auto ended = enter_section()) return *ended;
      if (section_end_ <= skip_before_) {  // the whole section precedes the start
        in_section_ = false;
        marker_ = section_end_;
      }
      continue;
    }
    if (cursor_ >= section_end_) {
      in_section_ = false;
      marker_ = section_end_;
      continue;
    }
    SegmentItem item = read_entry();
    auto* entry = std::get_if<SegmentEntry>(&item);
    if (entry == nullptr || entry->offset >= skip_before_) return item;
  }
  return *end_;
}

}  // namespace commitlog
