// SPDX-License-Identifier: Apache-2.0
#include "commitlog/tail_reader.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <optional>

#include "commitlog/cdc/cdc_writer.h"
#include "commitlog/replay/segment_replay.h"
#include "commitlog/replay/tail_segment.h"
#include "segment/file_name.h"

namespace commitlog {
namespace {

struct Index {
  uint64_t offset = 0;
  bool completed = false;
};

// The idx file beside a segment in cdc_raw: "<offset>\n" and, once finished,
// "COMPLETED\n". It is replaced by a rename, so it is read whole or not at all.
std::optional<Index> read_index(FileSystem& fs, const SegmentFile& segment) {
  const std::string path = cdc_index_name(segment.path);
  if (!fs.exists(path)) return std::nullopt;
  auto file = fs.open(path, OpenMode::kRead);
  if (!file.ok()) return std::nullopt;
  std::array<char, 64> text{};
  auto got = (*file)->read_at(0, std::as_writable_bytes(std::span(text)));
  if (!got.ok()) return std::nullopt;
  const std::string_view s(text.data(), *got);
  Index index;
  const size_t newline = s.find('\n');
  if (newline == std::string_view::npos) return std::nullopt;
  auto [end, ec] = std::from_chars(s.data(), s.data() + newline, index.offset);
  if (ec != std::errc() || end != s.data() + newline) return std::nullopt;
  index.completed = s.substr(newline + 1).starts_with("COMPLETED");
  return index;
}

Status gap(const std::string& what) { return Status::not_found("gap in the log: " + what); }

// The segment files of a directory as one look found them.
struct Listing {
  std::vector<SegmentFile> files;
  bool cdc_raw = false;
};

Result<Listing> list(FileSystem& fs, const std::string& dir) {
  auto names = fs.list(dir);
  if (!names.ok()) return names.status();
  auto files = list_segment_files(fs, dir);
  if (!files.ok()) return files.status();
  Listing listing;
  listing.cdc_raw = std::any_of(names->begin(), names->end(),
                                [](const std::string& n) { return n.ends_with(kCdcIndexSuffix); });
  listing.files = std::move(files).value();
  return listing;
}

}  // namespace

struct TailReader::State {
  std::string dir;
  TailOptions options;
  Position position;
  std::optional<TailSegment> current;

  // How far `files[i]` may be read: what the segments after it prove.
  TailSegment::Bound bound_from_later(const std::vector<SegmentFile>& files, size_t i) const {
    for (size_t j = i + 1; j < files.size(); ++j) {
      auto p = read_prologue(*options.file_system, files[j]);
      if (!p.ok()) return TailSegment::Bound::kDurable;
      // A header not written (yet): the writer is making that segment, or
      // was killed while it did. Either way it proves nothing; a segment
      // after it, which only a later run makes, may.
      const bool unwritten = p->problem == HeaderProblem::kAllZero || p->problem == HeaderProblem::kTooShort;
      if (unwritten && !p->has_data) continue;
      if (p->problem != HeaderProblem::kNone) return TailSegment::Bound::kDurable;
      if (p->header.previous_id == 0) return TailSegment::Bound::kRunEnded;
      if (p->has_data) {
        return j == i + 1 && p->header.previous_id == files[i].id ? TailSegment::Bound::kFinished
                                                                   : TailSegment::Bound::kRunEnded;
      }
    }
    return TailSegment::Bound::kDurable;
  }

  Status enter(const SegmentFile& file, bool cdc_raw, bool* waiting) {
    if (position.offset > 0 && file.id != position.segment) {
      return gap("segment " + std::to_string(position.segment) + " was deleted before the tail read it past offset " +
                 std::to_string(position.offset) + " (the next one in " + dir + " is " + base_name(file.path) + ")");
    }
    auto opened = TailSegment::open(*options.file_system, file, options.keys.get());
    if (!opened.ok()) return opened.status();
    if (!opened->has_value()) {
      *waiting = true;
      return {};
    }
    const SegmentHeader& header = (*opened)->header();
    // No entry or marker starts where the end marker would not fit.
    if (file.id == position.segment && position.offset > header.capacity - format::kMarkerSize) {
      return Status::invalid_argument("position " + position.to_string() + " lies past the end of " + file.path +
                                      " (capacity " + std::to_string(header.capacity) + ")");
    }
    const uint64_t previous = header.previous_id;
    if (!cdc_raw && position.segment != 0 && previous != 0 && previous >= position.segment) {
      return gap("segment " + std::to_string(previous) + ", which " + base_name(file.path) +
                 " follows, was deleted from " + dir + " before the tail read it");
    }
    current = std::move(*opened);
    position = {file.id, file.id == position.segment ? position.offset : 0};
    return {};
  }

  // A position inside a segment newer than any in a log directory was never
  // handed out here: the writer keeps its newest segment. (In cdc_raw that
  // segment may have been deleted by its consumer.) {id, 0} is where the
  // tail goes on after segment id - 1, so it is no such position.
  Status check_not_past_newest(const Listing& listing) const {
    if (listing.cdc_raw || listing.files.empty() || position.offset == 0) return {};
    return Status::invalid_argument("position " + position.to_string() + " lies past the newest segment in " + dir +
                                    ", " + base_name(listing.files.back().path));
  }
};

TailReader::TailReader(std::string directory, TailOptions options)
    : state_(std::make_unique<State>(State{std::move(directory), std::move(options), {}, std::nullopt})) {
  state_->position = state_->options.from;
}

TailReader::~TailReader() = default;
TailReader::TailReader(TailReader&&) noexcept = default;
TailReader& TailReader::operator=(TailReader&&) noexcept = default;

Position TailReader::position() const { return state_ ? state_->position : Position{}; }

Result<uint64_t> TailReader::poll(const ReplayHandler& handler) {
  if (!state_) return Status::invalid_argument("poll: this TailReader was moved from");
  State& s = *state_;
  FileSystem& fs = *s.options.file_system;
  uint64_t delivered = 0;
  const ReplayHandler counting = [&](const ReplayedMutation& m) {
    CL_RETURN_IF_ERROR(handler(m));
    ++delivered;
    return Status{};
  };
  // The directory is listed, and later segments' prologues read, afresh for
  // each segment: the writer may have changed both while it was read.
  while (true) {
    if (!fs.is_directory(s.dir)) return delivered;
    auto listing = list(fs, s.dir);
    if (!listing.ok()) return listing.status();
    const std::vector<SegmentFile>& files = listing->files;
    const auto it = std::find_if(files.begin(), files.end(),
                                 [&](const SegmentFile& f) { return f.id >= s.position.segment; });
    if (it == files.end()) {
      CL_RETURN_IF_ERROR(s.check_not_past_newest(*listing));
      return delivered;
    }
    const size_t i = static_cast<size_t>(it - files.begin());
    if (!s.current || s.current->id() != it->id) {
      bool waiting = false;
      CL_RETURN_IF_ERROR(s.enter(*it, listing->cdc_raw, &waiting));
      if (waiting) {
        if (s.bound_from_later(files, i) != TailSegment::Bound::kRunEnded) return delivered;
        // Never written: its run ended while making it, as a replay finds too.
        s.position = {it->id + 1, 0};
        continue;
      }
    }
    // The index first: an offset it gives is then below what the files show.
    const std::optional<Index> index = read_index(fs, *it);
    CL_RETURN_IF_ERROR(s.current->refresh(index ? index->offset : 0));
    TailSegment::Bound bound =
        index && index->completed ? TailSegment::Bound::kFinished : s.bound_from_later(files, i);
    const TailSegment::Delivery d =
        s.current->deliver(s.position.offset, bound, index ? index->offset : 0, s.options.tables, counting);
    s.position.offset = d.next;
    if (!d.status.ok()) return d.status;
    if (!d.done) return delivered;
    s.position = {it->id + 1, 0};
    s.current.reset();
  }
}

}  // namespace commitlog
