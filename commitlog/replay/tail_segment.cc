// SPDX-License-Identifier: Apache-2.0
#include "commitlog/replay/tail_segment.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <variant>

#include "segment/segment_key.h"
#include "segment/segment_reader.h"

namespace commitlog {
namespace {

// A plain segment is read on from its first unsealed marker slot in steps
// that start at this and double while its markers go on: a poll that finds
// one new flush reads little.
constexpr uint64_t kFirstReadStep = 64 << 10;

Status corruption(const std::string& path, uint64_t offset, uint64_t bytes, DamageKind kind) {
  return Status::corruption(path + ": " + damage_kind_name(kind) + " at offset " + std::to_string(offset) + " (" +
                            std::to_string(bytes) + " bytes) below what the writer made durable");
}

// The capacity bounds every offset in the segment: one no writer makes is
// damage, refused before anything is sized by it.
Status check_capacity(const std::string& path, const SegmentHeader& header) {
  const uint64_t first_marker = format::first_marker_offset(header.flags);
  const bool synced_marks = (header.flags & format::kFlagSyncedMarks) != 0;
  std::string problem;
  if (header.capacity < first_marker + format::kMarkerSize) {
    problem = "leaves no room for the first marker at offset " + std::to_string(first_marker);
  } else if (synced_marks && header.capacity > format::kMaxSyncedMarksCapacity) {
    problem = "does not fit the 32-bit offsets of synced markers";
  } else if (header.capacity > format::kMaxCapacity) {
    problem = "is 4 GiB or more, which no writer makes";
  }
  if (problem.empty()) return {};
  return Status::corruption(path + ": segment header at offset " + std::to_string(format::kHeaderCapacityOffset) +
                            ": capacity " + std::to_string(header.capacity) + " " + problem);
}

}  // namespace

Result<std::optional<TailSegment>> TailSegment::open(FileSystem& fs, const SegmentFile& file,
                                                     const KeyProvider* keys) {
  auto handle = fs.open(file.path, OpenMode::kRead);
  if (!handle.ok()) return handle.status();
  std::array<std::byte, format::kHeaderSize + format::kKeyBlockSize> bytes{};
  auto got = (*handle)->read_at(0, bytes);
  if (!got.ok()) return got.status();
  SegmentHeader header;
  const HeaderProblem problem = decode_segment_header({bytes.data(), *got}, &header);
  if (problem == HeaderProblem::kAllZero || (problem == HeaderProblem::kTooShort && *got < format::kHeaderSize)) {
    return std::optional<TailSegment>();  // being created
  }
  if (problem != HeaderProblem::kNone) {
    return Status::corruption(file.path + ": " + header_problem_name(problem) + ": the tail cannot read it");
  }
  if (header.id != file.id) {
    return Status::corruption(file.path + ": header says segment " + std::to_string(header.id));
  }
  CL_RETURN_IF_ERROR(check_capacity(file.path, header));
  const uint64_t first_marker = format::first_marker_offset(header.flags);
  // A writer may have put the header in place but not yet the key block
  // after it (a mapped segment's image is visible as it is copied).
  const bool key_block_unwritten =
      std::all_of(bytes.begin() + format::kHeaderSize, bytes.end(), [](std::byte b) { return b == std::byte{0}; });
  if (*got < first_marker || (format::seals_entries(header.flags) && key_block_unwritten)) {
    return std::optional<TailSegment>();  // its key block is being written
  }
  // A plain segment's file is made whole before its header is written, so
  // its size bounds what is read of it; a file shorter than its capacity
  // reads as truncated.
  auto size = (*handle)->size();
  if (!size.ok()) return size.status();
  TailSegment segment(std::move(handle).value(), file, header, keys);
  if (!segment.compressed()) {
    segment.bytes_.resize(std::min(header.capacity, std::max<uint64_t>(*size, first_marker)));
  }
  if (format::seals_entries(header.flags)) {
    // The header and key block are written together, before any entry.
    const crypto::OpenedSegmentKey opened = crypto::open_segment_key(bytes, header.id, keys);
    if (!opened.data_key) return Status(opened.status.code(), file.path + ": " + opened.status.message());
    segment.image_.entry_key = std::make_shared<crypto::Gcm>(*opened.data_key);
  }
  if (!segment.compressed()) {
    std::copy(bytes.begin(), bytes.begin() + static_cast<ptrdiff_t>(first_marker), segment.bytes_.begin());
    segment.loaded_ = first_marker;
    segment.final_ = first_marker;  // written and synced before any entry
  }
  return std::optional<TailSegment>(std::move(segment));
}

TailSegment::TailSegment(std::unique_ptr<File> file, SegmentFile name, SegmentHeader header,
                         const KeyProvider* keys)
    : handle_(std::move(file)),
      file_(std::move(name)),
      keys_(keys),
      header_(header),
      walk_at_(format::first_marker_offset(header.flags)),
      bound_(walk_at_) {}

bool TailSegment::walk(std::span<const std::byte> bytes) {
  while (walk_at_ + format::kMarkerSize <= bytes.size()) {
    const auto marker = decode_marker(bytes.data() + walk_at_, header_.id, walk_at_, header_.flags);
    if (!marker || marker->next == format::kEndOfSegment) return true;
    bound_ = std::max(bound_, marker->synced);
    walk_at_ = marker->next;
  }
  return false;
}

// Only the bytes not final yet are read again. Those below what was proven
// before this read are final once read now; the range the markers found now
// prove is read once more.
Status TailSegment::load_plain_until_walk_ends(uint64_t known) {
  const uint64_t proven = std::max(bound_, known);
  loaded_ = std::min(loaded_, final_);
  for (uint64_t read_step = kFirstReadStep;; read_step *= 2) {
    if (walk(std::span(bytes_.data(), loaded_))) break;
    if (loaded_ >= bytes_.size()) break;
    const uint64_t step = std::min<uint64_t>(read_step, bytes_.size() - loaded_);
    auto got = handle_->read_at(loaded_, std::span(bytes_.data() + loaded_, step));
    if (!got.ok()) return got.status();
    loaded_ += *got;
    if (*got < step) {
      walk(std::span(bytes_.data(), loaded_));
      break;
    }
  }
  final_ = std::max(final_, std::min(proven, loaded_));
  return reread_until(std::min(bound_, loaded_));
}

Status TailSegment::reread_until(uint64_t to) {
  while (final_ < to) {
    auto got = handle_->read_at(final_, std::span(bytes_.data() + final_, to - final_));
    if (!got.ok()) return got.status();
    if (*got == 0) break;
    final_ += *got;
  }
  return {};
}

Status TailSegment::load_whole() {
  if (compressed()) {
    CL_RETURN_IF_ERROR(read_whole_file_handle());
    image_ = load_segment_image(bytes_, header_, keys_);
    const Status& key = image_.key_status;
    if (!key.ok()) return Status(key.code(), file_.path + ": " + key.message());
    return {};
  }
  if (whole_) return {};
  // Called once the segment is known finished or its run ended: what is
  // read now is final.
  loaded_ = std::min(loaded_, final_);
  while (loaded_ < bytes_.size()) {
    auto got = handle_->read_at(loaded_, std::span(bytes_.data() + loaded_, bytes_.size() - loaded_));
    if (!got.ok()) return got.status();
    if (*got == 0) break;
    loaded_ += *got;
  }
  bytes_.resize(loaded_);  // a file cut short reads as truncated
  final_ = loaded_;
  whole_ = true;
  return {};
}

Status TailSegment::read_whole_file_handle() {
  auto size = handle_->size();
  if (!size.ok()) return size.status();
  bytes_.resize(*size);
  uint64_t at = 0;
  while (at < *size) {
    auto got = handle_->read_at(at, std::span(bytes_.data() + at, *size - at));
    if (!got.ok()) return got.status();
    if (*got == 0) break;
    at += *got;
  }
  bytes_.resize(at);
  return {};
}

Status TailSegment::refresh(uint64_t known) {
  if (!compressed()) return load_plain_until_walk_ends(known);
  CL_RETURN_IF_ERROR(load_whole());
  walk(image_.bytes);
  return {};
}

TailSegment::Delivery TailSegment::deliver(uint64_t from, Bound bound, uint64_t known,
                                           const std::vector<uint32_t>& tables, const ReplayHandler& handler) {
  Delivery out{from, false, {}};
  if (bound != Bound::kDurable) {
    if (Status loaded = load_whole(); !loaded.ok()) {
      out.status = loaded;
      return out;
    }
  }
  // Below the bound, a view that ends in a zero marker slot: the reader stops
  // there as at the clean end of the data. The 16 bytes are put back after.
  SegmentImage view;
  std::span<std::byte> image = compressed() ? std::span<std::byte>(image_.owned) : std::span<std::byte>(bytes_);
  std::array<std::byte, format::kMarkerSize> saved{};
  uint64_t cut = UINT64_MAX;
  if (bound == Bound::kDurable) {
    cut = std::min({std::max(bound_, known), walk_at_, compressed() ? UINT64_MAX : final_,
                    image.size() - std::min<uint64_t>(image.size(), format::kMarkerSize)});
    if (cut <= from) return out;
    std::memcpy(saved.data(), image.data() + cut, saved.size());
    std::memset(image.data() + cut, 0, saved.size());
    view.bytes = image.first(cut + format::kMarkerSize);
    view.capacity = header_.capacity;
  }
  if (bound != Bound::kDurable && !compressed()) view = load_segment_image(bytes_, header_, keys_);
  if (!compressed()) view.entry_key = image_.entry_key;
  // The view's made end is no end of the data: a seal read with the header
  // (a finished segment) is for the whole file only.
  SegmentHeader header = header_;
  if (bound == Bound::kDurable) header.sealed_end = 0;
  SegmentReader reader(bound != Bound::kDurable && compressed() ? image_ : view, header);
  reader.skip_to(from);
  while (true) {
    const SegmentItem item = reader.next();
    if (const auto* e = std::get_if<SegmentEntry>(&item)) {
      if (tables.empty() || std::find(tables.begin(), tables.end(), e->table) != tables.end()) {
        const ReplayedMutation m{{header_.id, e->offset}, e->table, e->time_us, e->payload};
        if (Status handled = handler(m); !handled.ok()) {
          out.status = handled;
          break;
        }
      }
      out.next = e->next;
      continue;
    }
    if (const auto* d = std::get_if<SegmentDamage>(&item)) {
      if (bound == Bound::kRunEnded && !d->durable) {
        out.done = true;  // the torn tail of a crashed run: a replay ends it here too
        break;
      }
      out.status = corruption(file_.path, d->offset, d->length, d->kind);
      break;
    }
    const uint64_t end = std::get<SegmentEnd>(item).offset;
    if (bound != Bound::kDurable && from > end) {
      // No position lies past the end of a finished segment's data.
      out.status = Status::invalid_argument("position " + Position{header_.id, from}.to_string() +
                                            " lies past the end of the data of " + file_.path + ", at offset " +
                                            std::to_string(end));
      break;
    }
    out.done = bound != Bound::kDurable;
    break;
  }
  if (cut != UINT64_MAX) std::memcpy(image.data() + cut, saved.data(), saved.size());
  return out;
}

}  // namespace commitlog
