// SPDX-License-Identifier: Apache-2.0
#include "tests/support/durable_bounds.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "commitlog/file_system.h"
#include "commitlog/replayer.h"
#include "segment/codec.h"
#include "segment/format.h"
#include "segment/segment_image.h"
#include "segment/segment_reader.h"

namespace commitlog::testing {
namespace {

constexpr uint64_t kAll = std::numeric_limits<uint64_t>::max();

struct Scanned {
  uint64_t id = 0;
  SegmentHeader header;
  uint64_t bound = 0;
  bool has_data = false;
};

// The marker chain from the first slot, read independently of the segment
// reader: the largest synced offset on it, kAll where it ends closed.
uint64_t synced_by_markers(std::span<const std::byte> bytes, const SegmentHeader& header) {
  uint64_t synced = 0;
  for (uint64_t at = format::kFirstMarkerOffset; at + format::kMarkerSize <= bytes.size();) {
    auto marker = decode_marker(bytes.data() + at, header.id, at, header.flags);
    if (!marker) break;
    if (marker->next == format::kEndOfSegment) return kAll;
    synced = std::max(synced, marker->synced);
    at = marker->next;
  }
  return synced;
}

}  // namespace

std::map<uint64_t, uint64_t> durable_bounds(const std::string& dir) {
  FileSystem& fs = *posix_file_system();
  std::vector<Scanned> scanned;
  auto files = list_segment_files(fs, dir);
  if (!files.ok()) return {};
  for (const SegmentFile& file : *files) {
    auto bytes = read_whole_file(fs, file.path);
    if (!bytes.ok()) continue;
    Scanned s{file.id, {}, 0, false};
    if (decode_segment_header(*bytes, &s.header) != HeaderProblem::kNone) continue;
    const SegmentImage image = load_segment_image(*bytes, s.header);
    s.bound = std::max(synced_by_markers(image.bytes, s.header), image.durable_below);
    s.has_data = std::holds_alternative<SegmentEntry>(SegmentReader(image, s.header).next());
    scanned.push_back(std::move(s));
  }
  std::map<uint64_t, uint64_t> bounds;
  for (size_t i = 0; i < scanned.size(); ++i) {
    const bool settled = std::any_of(
        scanned.begin() + static_cast<std::ptrdiff_t>(i) + 1, scanned.end(),
        [](const Scanned& later) { return later.has_data || later.header.previous_id == 0; });
    bounds[scanned[i].id] = settled ? kAll : scanned[i].bound;
  }
  return bounds;
}

}  // namespace commitlog::testing
