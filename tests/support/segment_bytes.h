// SPDX-License-Identifier: Apache-2.0
// Segment files built byte by byte through the codec, as the writer lays them
// out, for tests that drive the readers from bytes (in the style of LevelDB's
// log_test.cc): sections whose markers record chosen synced offsets, the end
// marker, and the same image stored as compressed sections, one per flush.
// Plus the byte-twiddling helpers such tests damage the files with.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "segment/codec.h"
#include "segment/segment_image.h"
#include "segment/segment_reader.h"

namespace commitlog::testing {

class SegmentBuilder {
 public:
  explicit SegmentBuilder(uint64_t id = 1000, uint64_t capacity = 4096,
                          uint16_t flags = format::kFlagSyncedMarks, uint64_t previous_id = 0,
                          uint16_t version = format::kFormatVersion);

  // Seals `payloads` (table 7, time_us 1000 + their index) into a section and
  // flushes it; its marker records `synced`, by default its own offset, as a
  // writer that flushes every section does. Returns the marker's offset.
  uint64_t section(const std::vector<std::string>& payloads, std::optional<uint64_t> synced = std::nullopt);
  // Closes the segment as the writer does: an empty section and the end
  // marker after it, in one flush. In version 2 the end marker records the
  // empty section's marker as synced, as after the writer's last flush.
  void close();
  // Writes the seal (version 2): the bytes are final below `sealed_end`, by
  // default just past the end marker close() wrote.
  void seal(std::optional<uint64_t> sealed_end = std::nullopt);

  const std::vector<uint64_t>& entries() const { return entries_; }  // offsets, in order
  uint64_t open_marker() const { return open_; }
  uint64_t capacity() const { return capacity_; }

  // The plain segment file, preallocated to its capacity.
  std::vector<std::byte> plain() const;
  // The compressed segment file (kFlagLz4Sections): one section per flush,
  // LZ4 where that is smaller, raw otherwise, the file grown in the
  // writer's allocation steps. `section_at`, if given, receives each
  // section's file offset.
  std::vector<std::byte> compressed(std::vector<uint64_t>* section_at = nullptr) const;

 private:
  void write_marker(uint64_t at, const Marker& marker);
  void flush(uint64_t from, uint64_t to);

  const uint64_t id_;
  const uint64_t capacity_;
  const uint16_t flags_;
  const uint16_t version_;
  std::vector<std::byte> image_;
  std::vector<uint64_t> entries_;
  // What each flush stored: its image offset and the image bytes there then.
  std::vector<std::pair<uint64_t, std::vector<std::byte>>> flushes_;
  uint64_t open_ = format::kFirstMarkerOffset;
};

void flip_bit(std::vector<std::byte>& bytes, uint64_t offset, int bit = 0);
void fill(std::vector<std::byte>& bytes, uint64_t offset, uint64_t length, std::byte value = std::byte{0});

// Everything the reader yields for a segment file whose header decodes.
struct ReadBack {
  std::vector<std::string> payloads;
  std::vector<uint64_t> positions;
  std::vector<SegmentDamage> damage;
  std::vector<SectionDamage> section_damage;  // compressed
  SegmentEnd end;
};
ReadBack read_segment(const std::vector<std::byte>& file);

}  // namespace commitlog::testing
