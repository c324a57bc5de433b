// SPDX-License-Identifier: Apache-2.0
#include "commitlog/replay/segment_replay.h"

#include <algorithm>
#include <variant>

#include "segment/byte_scan.h"
#include "segment/format.h"
#include "segment/segment_reader.h"

namespace commitlog {

Result<SegmentPrologue> read_prologue(FileSystem& fs, const SegmentFile& file) {
  SegmentPrologue p{file};
  auto f = fs.open(file.path, OpenMode::kRead);
  if (!f.ok()) return f.status();
  std::byte bytes[format::kHeaderSize + format::kKeyBlockSize + format::kSectionHeaderSize] = {};
  auto got = (*f)->read_at(0, bytes);
  if (!got.ok()) return got.status();
  p.problem = decode_bounded_segment_header({bytes, *got}, &p.header);
  // The id from the name, not the header: a damaged header must not hide
  // that the segment holds sealed data. A plain segment starts with a
  // marker, a compressed one with a section header; without a readable
  // header, any flags and capacity are allowed.
  const bool readable = p.problem == HeaderProblem::kNone;
  const uint16_t flags = readable ? p.header.flags : format::kKnownFlags;
  const uint64_t capacity = readable ? p.header.capacity : UINT64_MAX;
  auto marker_at = [&](uint64_t offset) {
    return *got >= offset + format::kMarkerSize && decode_marker(bytes + offset, file.id, offset, flags);
  };
  auto section_at = [&](uint64_t offset) {
    return *got >= offset + format::kSectionHeaderSize &&
           decode_section_header(bytes + offset, file.id, offset, flags, capacity);
  };
  // An encrypted segment's first marker or section starts after its key block.
  const uint64_t keyed = format::kHeaderSize + format::kKeyBlockSize;
  p.has_data = readable ? marker_at(format::first_marker_offset(flags)) || section_at(format::first_section_offset(flags))
                        : marker_at(format::kHeaderSize) || marker_at(keyed) || section_at(format::kHeaderSize) ||
                              section_at(keyed);
  return p;
}

Result<uint64_t> read_segment_bytes(FileSystem& fs, const SegmentFile& file, const SegmentHeader& header,
                                    std::vector<std::byte>* out) {
  auto f = fs.open(file.path, OpenMode::kRead);
  if (!f.ok()) return f.status();
  auto size = (*f)->size();
  if (!size.ok()) return size.status();
  out->resize(std::min(*size, segment_read_limit(header)));  // zero-fills only what grows
  auto got = (*f)->read_at(0, *out);
  if (!got.ok()) return got.status();
  out->resize(*got);
  return *size;
}

// Without a header nothing says how long the segment is; the largest plain
// segment file any writer makes bounds the time spent looking.
Result<UnreadableSegment> scan_unreadable_segment(FileSystem& fs, const SegmentFile& file,
                                                  std::vector<std::byte>* buffer) {
  constexpr uint64_t kChunk = uint64_t{1} << 20;
  SegmentHeader largest;
  largest.capacity = format::kMaxCapacity;
  const uint64_t limit = segment_read_limit(largest);
  auto f = fs.open(file.path, OpenMode::kRead);
  if (!f.ok()) return f.status();
  UnreadableSegment scan;
  buffer->resize(kChunk);
  while (scan.read < limit) {
    const std::span<std::byte> chunk(buffer->data(), std::min(kChunk, limit - scan.read));
    auto got = (*f)->read_at(scan.read, chunk);
    if (!got.ok()) return got.status();
    const uint64_t end = nonzero_end(chunk.first(*got), 0);
    if (end > 0) scan.nonzero_end = scan.read + end;
    scan.read += *got;
    if (*got < chunk.size()) break;
  }
  return scan;
}

void mark_run_ends(std::vector<SegmentPrologue>& prologues) {
  bool later_data_in_run = false;
  for (size_t i = prologues.size(); i-- > 0;) {
    if (i + 1 < prologues.size()) {
      const SegmentPrologue& next = prologues[i + 1];
      const bool continues = next.problem != HeaderProblem::kNone ||
                             next.header.id != next.file.id ||
                             next.header.previous_id == prologues[i].file.id;
      if (!continues) later_data_in_run = false;
    }
    prologues[i].may_be_torn = !later_data_in_run;
    later_data_in_run = later_data_in_run || prologues[i].has_data;
  }
}

bool SegmentReplay::replay(const SegmentPrologue& p) {
  FileSystem& fs = *options_.file_system;
  image_ = nullptr;
  if (p.problem != HeaderProblem::kNone || p.header.id != p.file.id) {
    // Without a readable header the segment cannot be read. Only a file of
    // zeros where its run may end is the unused leftover of a crash while
    // it was made: a header is durable before anything is written after it.
    auto scan = scan_unreadable_segment(fs, p.file, &buffer_);
    if (!scan.ok()) return stop(scan.status());
    report_.bytes_read += scan->read;
    ++report_.segments;
    data_ = {};
    const bool leftover = p.problem == HeaderProblem::kAllZero && scan->nonzero_end == 0;
    const std::string kind = p.problem != HeaderProblem::kNone
                                 ? header_problem_name(p.problem)
                                 : "header says segment " + std::to_string(p.header.id) +
                                       ", name says " + std::to_string(p.file.id);
    return judge(p, {0, scan->nonzero_end, kind, !leftover}) != Next::kStop;
  }
  auto file_size = read_segment_bytes(fs, p.file, p.header, &buffer_);
  if (!file_size.ok()) return stop(file_size.status());
  const std::span<const std::byte> file = buffer_;
  report_.bytes_read += file.size();
  ++report_.segments;
  data_ = file;
  if (p.may_be_torn && p.has_data && p.header.sealed_end == 0) report_.unproved_tails.push_back(p.file.path);
  const SegmentImage image = load_segment_image(file, p.header, options_.keys.get(), *file_size);
  image_ = &image;
  // Sealed entries without their key: the walk below checks their framing
  // and delivers nothing.
  const bool sealed_unopened = !image.key_status.ok() && format::seals_entries(p.header.flags);
  if (!image.key_status.ok()) {
    const bool go_on = unopened(p, image);
    if (!go_on || !sealed_unopened) return go_on;
  }
  data_ = image.bytes;
  next_section_damage_ = 0;
  SegmentReader reader(image, p.header);
  if (options_.from && options_.from->segment == p.file.id) reader.skip_to(options_.from->offset);
  while (true) {
    const SegmentItem item = reader.next();
    if (const auto* e = std::get_if<SegmentEntry>(&item)) {
      if (sealed_unopened) {
        ++report_.unopened_mutations;
      } else if (!deliver(p, *e)) {
        return false;
      }
      continue;
    }
    Finding f;
    if (const auto* d = std::get_if<SegmentDamage>(&item)) {
      f = {d->offset, d->length, damage_kind_name(d->kind), d->durable};
      attach_sections(f, d->offset + d->length);
    } else if (next_section_damage_ < image.damage.size()) {
      // Damage to compressed sections that the image reads past, as when
      // the last flush was lost and the image ends cleanly before it.
      const SectionDamage& s = image.damage[next_section_damage_];
      f = {s.image_at, s.image_bytes, damage_kind_name(s.kind), false};
      attach_sections(f, s.image_at + 1);
    } else if (std::get<SegmentEnd>(item).kind == EndKind::kEndOfData && !p.may_be_torn) {
      // A full segment is closed before the next one takes data.
      f = {std::get<SegmentEnd>(item).offset, 0, "segment not closed, yet a later segment of its run holds data",
           true};
      return judge(p, f) != Next::kStop;
    } else {
      return true;
    }
    const Next next = judge(p, f);
    if (next != Next::kGoOn) return next == Next::kEndSegment;
  }
}

void SegmentReplay::attach_sections(Finding& f, uint64_t upto) {
  if (image_ == nullptr) return;
  for (; next_section_damage_ < image_->damage.size(); ++next_section_damage_) {
    const SectionDamage& s = image_->damage[next_section_damage_];
    if (s.image_at >= upto) return;
    // The section names the cause; a durable one outranks one that is not.
    if (f.stored_from == UINT64_MAX || (s.durable && !f.durable)) f.kind = damage_kind_name(s.kind);
    f.durable = f.durable || s.durable;
    f.stored_from = std::min(f.stored_from, s.file_offset);
    f.stored_to = std::max(f.stored_to, s.file_offset + s.file_bytes);
  }
}

SegmentReplay::Next SegmentReplay::judge(const SegmentPrologue& p, Finding f) {
  const RecoveryMode mode = options_.mode;
  // Past a torn tail nothing is delivered, so what is replayed has no gap;
  // the damaged sections beyond it are part of it, and may prove it durable.
  const bool ends_segment = !f.durable && p.may_be_torn &&
                            (mode == RecoveryMode::kTolerateTornTail || mode == RecoveryMode::kPointInTime);
  if (ends_segment) {
    attach_sections(f, UINT64_MAX);
    f.bytes = std::max(f.bytes, nonzero_end(data_, f.offset) - f.offset);
  }
  const bool torn = !f.durable && p.may_be_torn;
  const bool stored = f.stored_from != UINT64_MAX;
  report_.problems.push_back({p.file.path, f.offset, f.kind, f.bytes, !torn, stored ? f.stored_from : 0,
                              stored ? f.stored_to - f.stored_from : 0});
  const std::string where = p.file.path + ": offset " + std::to_string(f.offset) + ": " + f.kind;
  if (torn) {
    report_.torn_tail_bytes += f.bytes;
    // An unused segment (nothing torn) is all an absolute replay accepts.
    const bool nothing_torn = f.bytes == 0 && !stored;
    if (mode != RecoveryMode::kAbsolute || nothing_torn) return ends_segment ? Next::kEndSegment : Next::kGoOn;
    report_.stopped_at = Position{p.file.id, f.offset};
    stop(Status::corruption(where + " (a torn tail, which absolute recovery refuses)"));
    return Next::kStop;
  }
  ++report_.corruptions;
  if (mode == RecoveryMode::kSkip) {
    report_.skipped_bytes += f.bytes;
    return Next::kGoOn;
  }
  report_.stopped_at = Position{p.file.id, f.offset};
  if (mode != RecoveryMode::kPointInTime) stop(Status::corruption(where));
  return Next::kStop;
}

bool SegmentReplay::deliver(const SegmentPrologue& p, const SegmentEntry& e) {
  const Position position{p.file.id, e.offset};
  auto start = options_.table_start.find(e.table);
  if ((options_.cutoff_time_us && e.time_us > *options_.cutoff_time_us) ||
      (start != options_.table_start.end() && position < start->second)) {
    ++report_.filtered_mutations;
    return true;
  }
  ++report_.mutations;
  report_.payload_bytes += e.payload.size();
  report_.last_position = position;
  Status status = handler_(ReplayedMutation{position, e.table, e.time_us, e.payload});
  return status.ok() || stop(status);
}

bool SegmentReplay::unopened(const SegmentPrologue& p, const SegmentImage& image) {
  const Status& why = image.key_status;
  if (!options_.framing_only || options_.keys != nullptr) return stop(Status(why.code(), p.file.path + ": " + why.message()));
  // Without keys only the framing is checked; its damage is judged as ever.
  report_.unopened.push_back(p.file.path);
  if (format::seals_entries(p.header.flags)) return true;
  for (const SectionDamage& s : image.damage) {
    Finding f{s.image_at, s.image_bytes, damage_kind_name(s.kind), s.durable, s.file_offset, s.file_offset + s.file_bytes};
    const Next next = judge(p, f);
    if (next != Next::kGoOn) return next == Next::kEndSegment;
  }
  return true;
}

bool SegmentReplay::stop(const Status& status) {
  report_.status = status;
  return false;
}

}  // namespace commitlog
