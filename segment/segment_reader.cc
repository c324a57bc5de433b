#include "segment/segment_reader.h"

#include <algorithm>

#include "segment/checksum.h"
#include "segment/format.h"

namespace commitlog {

const char* damage_kind_name(DamageKind kind) {
  switch (kind) {
    case DamageKind::kBadMarker: return "bad sync marker";
    case DamageKind::kBadEntryHeader: return "bad entry header checksum";
    case DamageKind::kBadPayloadChecksum: return "bad payload checksum";
    case DamageKind::kEntryOverrunsSection: return "entry overruns its sync section";
    case DamageKind::kBadSectionHeader: return "bad compressed section header";
    case DamageKind::kBadSectionChecksum: return "bad compressed section checksum";
    case DamageKind::kBadCompressedData: return "compressed section does not decompress";
  }
  return "unknown";
}

const char* end_kind_name(EndKind kind) {
  switch (kind) {
    case EndKind::kClosed: return "closed";
    case EndKind::kEndOfData: return "end of data";
    case EndKind::kTorn: return "torn";
  }
  return "unknown";
}

SegmentReader::SegmentReader(std::span<const std::byte> bytes, const SegmentHeader& header)
    : bytes_(bytes), header_(header), marker_(format::kFirstMarkerOffset) {}

bool SegmentReader::valid_marker_at(uint64_t at, Marker* marker) const {
  if (at + format::kMarkerSize > bytes_.size()) return false;
  const auto found = decode_marker(bytes_.data() + at, header_.id, at, header_.flags);
  if (!found || (found->next != format::kEndOfSegment && found->next > bytes_.size())) return false;
  *marker = *found;
  return true;
}

bool SegmentReader::zero_at(uint64_t at, uint64_t length) const {
  const auto* p = bytes_.data() + at;
  return std::all_of(p, p + length, [](std::byte b) { return b == std::byte{0}; });
}

uint64_t SegmentReader::find_marker_after(uint64_t from) const {
  Marker marker;
  for (uint64_t at = format::align_up(from); at + format::kMarkerSize <= bytes_.size();
       at += format::kAlignment) {
    if (valid_marker_at(at, &marker)) return at;
  }
  return UINT64_MAX;
}

// Every valid marker from the damage on is probed, not just the chain that
// follows it: after damage the chain cannot be trusted, and one marker with a
// larger synced is enough to prove the bytes durable. The probes run once, at
// the first damage (up to the last non-zero byte), and later damage, found
// further on, is answered from their suffix maxima.
bool SegmentReader::unflushed(uint64_t damage_at) {
  if ((header_.flags & format::kFlagSyncedMarks) == 0) return false;
  if (!scanned_from_ || damage_at < *scanned_from_) {
    scanned_from_ = damage_at;
    synced_after_.clear();
    const uint64_t end = damage_at + count_unsealed(damage_at);  // the last non-zero byte's end
    Marker marker;
    for (uint64_t at = format::align_up(damage_at); at + format::kMarkerSize <= end;
         at += format::kAlignment) {
      if (valid_marker_at(at, &marker)) synced_after_.push_back({at, marker.synced});
    }
    for (size_t i = synced_after_.size(); i-- > 1;) {
      synced_after_[i - 1].second = std::max(synced_after_[i - 1].second, synced_after_[i].second);
    }
  }
  auto first = std::lower_bound(synced_after_.begin(), synced_after_.end(), damage_at,
                                [](const auto& m, uint64_t at) { return m.first < at; });
  return first == synced_after_.end() || first->second <= damage_at;
}

uint64_t SegmentReader::count_unsealed(uint64_t from) const {
  uint64_t end = bytes_.size();
  while (end > from && bytes_[end - 1] == std::byte{0}) --end;
  return end > from ? end - from : 0;
}

SegmentReader::Section SegmentReader::section() const {
  Section s{marker_, section_end_, std::nullopt};
  if ((header_.flags & format::kFlagSyncedMarks) != 0) s.synced = section_synced_;
  return s;
}

SegmentItem SegmentReader::enter_section(uint64_t at) {
  Marker marker;
  if (valid_marker_at(at, &marker)) {
    ++sections_;
    if (marker.next == format::kEndOfSegment) {
      ended_ = true;
      return SegmentEnd{EndKind::kClosed, at, count_unsealed(at + format::kMarkerSize), sections_};
    }
    in_section_ = true;
    cursor_ = at + format::kMarkerSize;
    section_end_ = marker.next;
    section_synced_ = marker.synced;
    return SegmentEnd{};  // not returned: the caller continues into the section
  }
  ended_ = true;
  if (at + format::kMarkerSize <= bytes_.size() && zero_at(at, format::kMarkerSize)) {
    return SegmentEnd{EndKind::kEndOfData, at, count_unsealed(at + format::kMarkerSize), sections_};
  }
  // Kudu's rule: damage followed by valid sealed data is corruption; damage
  // with nothing valid after it is a torn tail.
  const uint64_t found = find_marker_after(at + format::kAlignment);
  if (found == UINT64_MAX) return SegmentEnd{EndKind::kTorn, at, count_unsealed(at), sections_};
  ended_ = false;
  marker_ = found;
  // The seal that writes the end-of-segment marker also writes the marker
  // before it; a power loss may keep either without the other.
  Marker after;
  const bool only_end_marker_after =
      valid_marker_at(found, &after) && after.next == format::kEndOfSegment;
  return SegmentDamage{at, found - at, DamageKind::kBadMarker, only_end_marker_after,
                       unflushed(at)};
}

SegmentItem SegmentReader::next() {
  while (true) {
    if (!in_section_) {
      if (ended_) return end_;
      SegmentItem item = enter_section(marker_);
      if (!in_section_) {
        if (ended_) end_ = std::get<SegmentEnd>(item);
        return item;
      }
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
    const uint64_t at = cursor_;
    const std::byte* e = bytes_.data() + at;
    // Damage in the last section (no valid marker after it but the
    // end-of-segment one) may be a torn tail: a seal writes the section's
    // marker while its entries are not yet synced, and a power loss may keep
    // the marker's page without an entry's. The replayer decides.
    auto damaged = [&](SegmentDamage damage) -> SegmentItem {
      Marker after;
      damage.in_last_section =
          valid_marker_at(section_end_, &after)
              ? after.next == format::kEndOfSegment
              : find_marker_after(section_end_ + format::kAlignment) == UINT64_MAX;
      damage.unflushed = unflushed(damage.offset);
      return damage;
    };
    if (at + format::kEntryHeaderSize > section_end_) {
      cursor_ = section_end_;
      return damaged({at, section_end_ - at, DamageKind::kEntryOverrunsSection});
    }
    const auto header = decode_entry_header(e, header_.id, at);
    if (!header) {
      cursor_ = section_end_;  // the length cannot be trusted: skip the section's rest
      return damaged({at, section_end_ - at, DamageKind::kBadEntryHeader});
    }
    const uint64_t footprint = format::align_up(header->length);
    if (at + footprint > section_end_) {
      cursor_ = section_end_;
      return damaged({at, section_end_ - at, DamageKind::kEntryOverrunsSection});
    }
    cursor_ = at + footprint;
    std::span<const std::byte> payload{e + format::kEntryHeaderSize, header->payload_size()};
    if (header->payload_checksum != checksum(payload)) {
      return damaged({at, footprint, DamageKind::kBadPayloadChecksum});
    }
    if (at < skip_before_) continue;
    return SegmentEntry{at, header->table, header->time_us, payload};
  }
}

}  // namespace commitlog
