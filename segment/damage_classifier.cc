// SPDX-License-Identifier: Apache-2.0
#include "segment/damage_classifier.h"

#include <algorithm>

#include "segment/byte_scan.h"
#include "segment/format.h"

namespace commitlog {

DamageClassifier::DamageClassifier(const SegmentImage& image, const SegmentHeader& header)
    : image_(image), header_(header) {}

std::optional<Marker> DamageClassifier::marker_at(uint64_t at) const {
  if (at + format::kMarkerSize > image_.bytes.size()) return std::nullopt;
  auto marker = decode_marker(image_.bytes.data() + at, header_.id, at, header_.flags);
  if (marker && marker->next != format::kEndOfSegment && marker->next > image_.capacity) return std::nullopt;
  return marker;
}

uint64_t DamageClassifier::nonzero_end(uint64_t from) {
  if (!nonzero_end_) nonzero_end_ = commitlog::nonzero_end(image_.bytes, 0);
  return std::max(*nonzero_end_, from);
}

// Every valid marker is probed, not just a chain: after damage the chain
// cannot be trusted, and one later marker is enough to prove the bytes
// durable.
void DamageClassifier::scan_from(uint64_t from) {
  scanned_from_ = from;
  found_.clear();
  const bool synced_marks = (header_.flags & format::kFlagSyncedMarks) != 0;
  const auto region = image_.bytes.first(std::min<uint64_t>(image_.bytes.size(), nonzero_end(from)));
  find_forward(region, from, format::kMarkerSize, [&](uint64_t at) {
    if (auto m = marker_at(at)) {
      const bool end = m->next == format::kEndOfSegment;
      found_.push_back({at, synced_marks ? m->synced : end ? 0 : at});
    }
    return false;
  });
  for (size_t i = found_.size(); i-- > 1;) {
    found_[i - 1].proves = std::max(found_[i - 1].proves, found_[i].proves);
  }
}

uint64_t DamageClassifier::next_marker(uint64_t from) {
  if (!scanned_from_ || from < *scanned_from_) scan_from(from);
  auto it = std::lower_bound(found_.begin(), found_.end(), from,
                             [](const Found& f, uint64_t at) { return f.at < at; });
  return it == found_.end() ? UINT64_MAX : it->at;
}

bool DamageClassifier::durable(uint64_t at) {
  if (at < image_.durable_below || at < header_.sealed_end) return true;
  if (!scanned_from_ || at < *scanned_from_) scan_from(at);
  auto it = std::lower_bound(found_.begin(), found_.end(), at,
                             [](const Found& f, uint64_t offset) { return f.at < offset; });
  return it != found_.end() && it->proves > at;
}

}  // namespace commitlog
