// SPDX-License-Identifier: Apache-2.0
// Decides, for damage at an offset of a segment image, whether it can be a
// torn write, and finds where reading can resume after it.
//
// Damage is durable, so corruption wherever it is, when something written
// after it proves that its bytes had been made durable:
//  - a valid marker at or after it records a synced offset beyond it
//    (format::kFlagSyncedMarks: each marker says how far the last completed
//    flush of its segment reached);
//  - without that flag, any valid marker other than the end marker follows
//    it (Kudu's rule: damage followed by valid sealed data);
//  - in a compressed segment, a later flush follows it
//    (SegmentImage::durable_below);
//  - it lies below the segment's seal (format::kHeaderSealOffset).
// Otherwise nothing durable can lie beyond it: a power loss during the last
// flushes may have torn it, which in the newest segment of a run is a torn
// tail. The one such case that bytes cannot tell from loss is zeros from a
// point after the last valid marker to the end of the file.
//
// The first query probes every 8-byte offset from there to the last non-zero
// byte for a valid marker; later queries, further on, are answered from that
// scan. A clean segment is never scanned.
//
// Lifetime: `image` must outlive the classifier. Not thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "segment/codec.h"
#include "segment/segment_image.h"

namespace commitlog {

class DamageClassifier {
 public:
  DamageClassifier(const SegmentImage& image, const SegmentHeader& header);

  // The marker at `at` if it is valid there and points within the segment.
  std::optional<Marker> marker_at(uint64_t at) const;
  // The offset of the first valid marker at or after `from`, or UINT64_MAX.
  uint64_t next_marker(uint64_t from);
  // Whether damage starting at `at` lies below what a later write proves durable.
  bool durable(uint64_t at);
  // One past the image's last non-zero byte, and at least `from`.
  uint64_t nonzero_end(uint64_t from);

 private:
  struct Found {
    uint64_t at = 0;
    uint64_t proves = 0;  // the largest offset this marker, or one after it, proves durable
  };
  void scan_from(uint64_t from);

  const SegmentImage& image_;
  const SegmentHeader header_;
  std::optional<uint64_t> scanned_from_;
  std::vector<Found> found_;  // valid markers from scanned_from_ on, in offset order
  std::optional<uint64_t> nonzero_end_;
};

}  // namespace commitlog
