// SPDX-License-Identifier: Apache-2.0
#include "tests/support/segment_bytes.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <variant>

#include "segment/checksum.h"
#include "segment/compression.h"

namespace commitlog::testing {

SegmentBuilder::SegmentBuilder(uint64_t id, uint64_t capacity, uint16_t flags, uint64_t previous_id,
                               uint16_t version)
    : id_(id), capacity_(capacity), flags_(flags), version_(version), image_(capacity) {
  encode_segment_header({version, flags, id, 1, capacity, previous_id},
                        std::span<std::byte, format::kHeaderSize>(image_.data(), format::kHeaderSize));
}

void SegmentBuilder::write_marker(uint64_t at, const Marker& marker) {
  encode_marker(image_.data() + at, marker, id_, at, flags_);
}

void SegmentBuilder::flush(uint64_t from, uint64_t to) {
  flushes_.push_back({from, {image_.begin() + static_cast<ptrdiff_t>(from), image_.begin() + static_cast<ptrdiff_t>(to)}});
}

uint64_t SegmentBuilder::section(const std::vector<std::string>& payloads, std::optional<uint64_t> synced) {
  const uint64_t marker = open_;
  uint64_t at = marker + format::kMarkerSize;
  for (const std::string& p : payloads) {
    const auto payload = std::as_bytes(std::span(p));
    if (at + format::entry_footprint(p.size()) + format::kMarkerSize > capacity_) {
      throw std::length_error("SegmentBuilder: the section does not fit");
    }
    const auto time = static_cast<uint64_t>(1000 + entries_.size());
    encode_entry_header(image_.data() + at,
                        {static_cast<uint32_t>(format::kEntryHeaderSize + p.size()), 7, time, checksum(payload)},
                        id_, at);
    std::memcpy(image_.data() + at + format::kEntryHeaderSize, p.data(), p.size());
    entries_.push_back(at);
    at += format::entry_footprint(p.size());
  }
  write_marker(marker, {at, synced.value_or(marker)});
  flush(marker, at + format::kMarkerSize);
  open_ = at;
  return marker;
}

void SegmentBuilder::close() {
  const uint64_t marker = open_;
  write_marker(marker, {marker + format::kMarkerSize, marker});
  // A version 1 end marker is all ones, whatever it could have recorded.
  write_marker(marker + format::kMarkerSize, {format::kEndOfSegment, version_ >= 2 ? marker : UINT32_MAX});
  flush(marker, marker + 2 * format::kMarkerSize);
  open_ = marker + format::kMarkerSize;
}

void SegmentBuilder::seal(std::optional<uint64_t> sealed_end) {
  encode_seal(sealed_end.value_or(open_ + format::kMarkerSize), id_,
              std::span<std::byte, format::kSealSize>(image_.data() + format::kHeaderSealOffset, format::kSealSize));
}

std::vector<std::byte> SegmentBuilder::plain() const { return image_; }

std::vector<std::byte> SegmentBuilder::compressed(std::vector<uint64_t>* section_at) const {
  std::vector<std::byte> file(image_.begin(), image_.begin() + format::kHeaderSize);
  encode_segment_header({version_, static_cast<uint16_t>(flags_ | format::kFlagLz4Sections), id_, 1,
                         capacity_, load_u64(image_.data() + format::kHeaderPreviousIdOffset)},
                        std::span<std::byte, format::kHeaderSize>(file.data(), format::kHeaderSize));
  if (version_ >= 2) {
    std::copy_n(image_.begin() + format::kHeaderSealOffset, format::kSealSize,
                file.begin() + format::kHeaderSealOffset);
  }
  uint64_t allocated = format::kHeaderSize;
  for (const auto& [from, bytes] : flushes_) {
    const std::span<const std::byte> range = bytes;
    std::vector<std::byte> stored(lz4_bound(range.size()));
    SectionHeader s{from, static_cast<uint32_t>(range.size()), 0, 0, 0};
    if (auto n = lz4_compress(range, stored)) {
      stored.resize(*n);
    } else {
      stored.assign(range.begin(), range.end());
      s.flags = format::kSectionRaw;
    }
    s.stored_length = static_cast<uint32_t>(stored.size());
    s.stored_checksum = checksum(stored);
    const uint64_t at = file.size();
    if (section_at != nullptr) section_at->push_back(at);
    const uint64_t total = format::align_up(format::kSectionHeaderSize + stored.size());
    if (at + total > allocated) {
      allocated += std::max(std::min(format::kCompressedAllocationStep, capacity_), total);
    }
    file.resize(at + total);
    encode_section_header(file.data() + at, s, id_, at);
    std::memcpy(file.data() + at + format::kSectionHeaderSize, stored.data(), stored.size());
  }
  file.resize(allocated);
  return file;
}

void flip_bit(std::vector<std::byte>& bytes, uint64_t offset, int bit) {
  if (offset >= bytes.size()) throw std::out_of_range("flip_bit past the end");
  bytes[offset] ^= std::byte(1u << bit);
}

void fill(std::vector<std::byte>& bytes, uint64_t offset, uint64_t length, std::byte value) {
  if (offset + length > bytes.size()) throw std::out_of_range("fill past the end");
  std::fill_n(bytes.begin() + static_cast<ptrdiff_t>(offset), length, value);
}

ReadBack read_segment(const std::vector<std::byte>& file) {
  SegmentHeader header;
  if (decode_segment_header(file, &header) != HeaderProblem::kNone) {
    throw std::invalid_argument("read_segment: the header does not decode");
  }
  const SegmentImage image = load_segment_image(file, header);
  ReadBack out;
  out.section_damage = image.damage;
  SegmentReader reader(image, header);
  while (true) {
    const SegmentItem item = reader.next();
    if (const auto* e = std::get_if<SegmentEntry>(&item)) {
      out.payloads.emplace_back(reinterpret_cast<const char*>(e->payload.data()), e->payload.size());
      out.positions.push_back(e->offset);
    } else if (const auto* d = std::get_if<SegmentDamage>(&item)) {
      out.damage.push_back(*d);
    } else {
      out.end = std::get<SegmentEnd>(item);
      return out;
    }
  }
}

}  // namespace commitlog::testing
