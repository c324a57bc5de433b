#include "commitlog/replayer.h"

#include <algorithm>

#include "segment/codec.h"
#include "segment/file_name.h"
#include "segment/format.h"
#include "segment/segment_image.h"
#include "segment/segment_reader.h"

namespace commitlog {
namespace {

// What the first bytes of a segment file say, read before any file is
// replayed, so the replayer knows where each process's run of segments ends.
struct Prologue {
  SegmentFile file;
  HeaderProblem problem = HeaderProblem::kNone;
  SegmentHeader header;
  bool has_data = false;    // its first marker is valid
  bool may_be_torn = false; // no later segment of its run holds data
};

Result<Prologue> read_prologue(FileSystem& fs, const SegmentFile& file) {
  Prologue p{file};
  auto f = fs.open(file.path, OpenMode::kRead);
  if (!f.ok()) return f.status();
  std::byte bytes[format::kHeaderSize + format::kSectionHeaderSize] = {};
  auto got = (*f)->read_at(0, bytes);
  if (!got.ok()) return got.status();
  p.problem = decode_segment_header({bytes, *got}, &p.header);
  // The id from the name, not the header: a damaged header must not hide
  // that the segment holds sealed data. A plain segment starts with a
  // marker, a compressed one with a section header; without a readable
  // header, any flags and capacity are allowed.
  const bool readable = p.problem == HeaderProblem::kNone;
  const uint16_t flags = readable ? p.header.flags : format::kKnownFlags;
  const uint64_t capacity = readable ? p.header.capacity : UINT64_MAX;
  const std::byte* first = bytes + format::kFirstMarkerOffset;
  p.has_data = (*got >= format::kFirstEntryOffset &&
                decode_marker(first, file.id, format::kFirstMarkerOffset, flags)) ||
               (*got >= sizeof bytes &&
                decode_section_header(first, file.id, format::kHeaderSize, flags, capacity));
  return p;
}

bool is_input_error(HeaderProblem problem) {
  return problem == HeaderProblem::kNotASegment || problem == HeaderProblem::kTooShort ||
         problem == HeaderProblem::kUnknownVersion || problem == HeaderProblem::kUnknownFlags;
}

// A segment continues the previous one's run when its header names it; one
// whose header is unreadable is taken to continue it.
void mark_run_ends(std::vector<Prologue>& prologues) {
  bool later_data_in_run = false;
  for (size_t i = prologues.size(); i-- > 0;) {
    if (i + 1 < prologues.size()) {
      const Prologue& next = prologues[i + 1];
      const bool continues = next.problem != HeaderProblem::kNone ||
                             next.header.previous_id == prologues[i].file.id;
      if (!continues) later_data_in_run = false;
    }
    prologues[i].may_be_torn = !later_data_in_run;
    later_data_in_run = later_data_in_run || prologues[i].has_data;
  }
}

class Replay {
 public:
  Replay(const ReplayOptions& options, const ReplayHandler& handler, ReplayReport& report)
      : options_(options), handler_(handler), report_(report) {}

  // Returns false when the replay must stop.
  bool segment(const Prologue& p) {
    Status read = read_whole_file(*options_.file_system, p.file.path, &buffer_);
    if (!read.ok()) return stop(read);
    const std::vector<std::byte>* bytes = &buffer_;
    report_.bytes_read += bytes->size();
    ++report_.segments;
    if (p.problem != HeaderProblem::kNone) {
      // Only a segment whose header write was cut short by a crash, and that
      // never held data, is an unused leftover; anything else is damage.
      return damage(p, 0, header_problem_name(p.problem), nonzero_bytes(*bytes),
                    p.may_be_torn && !p.has_data);
    }
    if (p.header.id != p.file.id) {
      return damage(p, format::kHeaderIdOffset,
                    "header says segment " + std::to_string(p.header.id) + ", name says " +
                        std::to_string(p.file.id),
                    bytes->size(), false);
    }
    const SegmentImage image = load_segment_image(*bytes, p.header);
    for (const SegmentDamage& bad : image.damage) {
      if (!damage(p, bad.offset, damage_kind_name(bad.kind), bad.skipped_bytes, false)) return false;
    }
    if (image.torn_bytes > 0 &&
        !damage(p, image.torn_offset, "torn compressed section", image.torn_bytes, p.may_be_torn)) {
      return false;
    }
    SegmentReader reader(image.bytes, p.header);
    if (options_.from && options_.from->segment == p.file.id) reader.skip_to(options_.from->offset);
    while (true) {
      SegmentItem item = reader.next();
      if (auto* entry = std::get_if<SegmentEntry>(&item)) {
        const Position position{p.file.id, entry->offset};
        if (filtered(entry->table, position, entry->time_us)) {
          ++report_.filtered_mutations;
          continue;
        }
        ++report_.mutations;
        report_.payload_bytes += entry->payload.size();
        report_.last_position = position;
        Status status = handler_(ReplayedMutation{position, entry->table, entry->time_us, entry->payload});
        if (!status.ok()) return stop(status);
      } else if (auto* bad = std::get_if<SegmentDamage>(&item)) {
        const std::string kind = damage_kind_name(bad->kind);
        if (bad->in_last_section && p.may_be_torn) {
          // Kudu's rule: damage with nothing valid after it, where a run's
          // tail may be torn, is that torn tail. Nothing after it is replayed.
          return damage(p, bad->offset, "torn tail (" + kind + ")",
                        nonzero_bytes(image.bytes.subspan(bad->offset)), true);
        }
        if (bad->unflushed && p.may_be_torn) {
          // Periodic seals without flushing, so a power loss may tear an
          // earlier section and keep a later one: no data was lost that a
          // flush had covered. Strict replay ends there, as at a torn tail,
          // so what it replays has no gap; skip replays what survived after.
          if (options_.mode != RecoveryMode::kSkip) {
            return damage(p, bad->offset, "torn tail (" + kind + ", never flushed)",
                          nonzero_bytes(image.bytes.subspan(bad->offset)), true);
          }
          if (!damage(p, bad->offset, "torn, never flushed (" + kind + ")", bad->skipped_bytes, true)) {
            return false;
          }
          continue;
        }
        if (!damage(p, bad->offset, kind, bad->skipped_bytes, false)) return false;
      } else {
        return end(p, std::get<SegmentEnd>(item));
      }
    }
  }

 private:
  bool filtered(uint32_t table, Position position, uint64_t time_us) const {
    if (options_.cutoff_time_us && time_us > *options_.cutoff_time_us) return true;
    auto start = options_.table_start.find(table);
    return start != options_.table_start.end() && position < start->second;
  }

  static uint64_t nonzero_bytes(std::span<const std::byte> bytes) {
    return static_cast<uint64_t>(std::count_if(bytes.begin(), bytes.end(),
                                               [](std::byte b) { return b != std::byte{0}; }));
  }

  bool end(const Prologue& p, const SegmentEnd& e) {
    if (e.kind == EndKind::kClosed) return true;
    if (e.kind == EndKind::kEndOfData && e.unsealed_bytes == 0 && p.may_be_torn) return true;
    if (e.kind == EndKind::kEndOfData && e.unsealed_bytes == 0) {
      return damage(p, e.offset, "segment not closed, yet a later segment of its run holds data", 0,
                    false);
    }
    return damage(p, e.offset, e.kind == EndKind::kTorn ? "torn tail (damaged marker)" : "torn tail",
                  e.unsealed_bytes, p.may_be_torn);
  }

  // A torn tail where one may be is normal; anything else is corruption.
  bool damage(const Prologue& p, uint64_t offset, const std::string& kind, uint64_t bytes,
              bool torn_tail_allowed) {
    report_.problems.push_back({p.file.path, offset, kind, bytes, !torn_tail_allowed});
    if (torn_tail_allowed) {
      report_.torn_tail_bytes += bytes;
      return true;
    }
    ++report_.corruptions;
    report_.skipped_bytes += bytes;
    if (options_.mode == RecoveryMode::kSkip) return true;
    return stop(Status::corruption(p.file.path + ": offset " + std::to_string(offset) + ": " + kind));
  }

  bool stop(const Status& status) {
    report_.status = status;
    return false;
  }

  const ReplayOptions& options_;
  const ReplayHandler& handler_;
  ReplayReport& report_;
  std::vector<std::byte> buffer_;  // the segment being replayed; reused for each
};

}  // namespace

Result<std::vector<SegmentFile>> list_segment_files(FileSystem& fs, const std::string& dir) {
  if (!fs.exists(dir)) return Status::not_found(dir + ": no such directory");
  if (!fs.is_directory(dir)) return Status::invalid_argument(dir + ": not a directory");
  auto names = fs.list(dir);
  if (!names.ok()) return names.status();
  std::vector<SegmentFile> files;
  for (const auto& name : *names) {
    auto id = parse_segment_file_name(name);
    if (!id.ok()) return Status::invalid_argument(dir + "/" + id.status().message());
    if (*id) files.push_back({**id, dir + "/" + name});
  }
  std::sort(files.begin(), files.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  return files;
}

ReplayReport replay_directory(const std::string& dir, const ReplayOptions& options,
                              const ReplayHandler& handler) {
  auto files = list_segment_files(*options.file_system, dir);
  if (!files.ok()) {
    ReplayReport report;
    report.status = files.status();
    return report;
  }
  return replay_segment_files(*files, options, handler);
}

ReplayReport replay_segment_files(const std::vector<SegmentFile>& files, const ReplayOptions& options,
                                  const ReplayHandler& handler) {
  ReplayReport report;
  FileSystem& fs = *options.file_system;
  std::vector<Prologue> prologues;
  for (const SegmentFile& file : files) {
    auto p = read_prologue(fs, file);
    if (!p.ok()) {
      report.status = p.status();
      return report;
    }
    if (is_input_error(p->problem)) {
      report.status = Status::invalid_argument(file.path + ": " + header_problem_name(p->problem));
      return report;
    }
    prologues.push_back(std::move(p).value());
  }
  mark_run_ends(prologues);
  Replay replay(options, handler, report);
  for (const Prologue& p : prologues) {
    if (options.from && p.file.id < options.from->segment) continue;
    if (!replay.segment(p)) break;
  }
  return report;
}

}  // namespace commitlog
