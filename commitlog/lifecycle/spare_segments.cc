// SPDX-License-Identifier: Apache-2.0
#include "commitlog/lifecycle/spare_segments.h"

#include <algorithm>

#include "commitlog/util/report.h"
#include "segment/codec.h"
#include "segment/file_name.h"
#include "segment/format.h"

namespace commitlog {

SpareSegments::SpareSegments(FileSystem& fs, std::string dir, uint64_t file_size, bool reuse)
    : fs_(fs), dir_(std::move(dir)), file_size_(file_size), reuse_(reuse) {}

namespace {

// What the file named like a spare begins with. A spare of this log is a
// former segment, so its header is intact, or all zeros if it was made and
// never used; anything else is someone else's file, never to be deleted or
// written over.
enum class SpareHeader { kForeign, kPlain, kEncrypted };

SpareHeader spare_header(File& file) {
  std::byte bytes[format::kHeaderSize];
  auto read = file.read_at(0, bytes);
  if (!read.ok() || *read != sizeof bytes) return SpareHeader::kForeign;
  SegmentHeader header;
  if (decode_segment_header(bytes, &header) == HeaderProblem::kNone) {
    return (header.flags & format::kFlagEncrypted) != 0 ? SpareHeader::kEncrypted : SpareHeader::kPlain;
  }
  const bool zeros = std::all_of(std::begin(bytes), std::end(bytes), [](std::byte b) { return b == std::byte{0}; });
  return zeros ? SpareHeader::kPlain : SpareHeader::kForeign;
}

}  // namespace

Result<std::unique_ptr<SpareSegments>> SpareSegments::open(FileSystem& fs, std::string dir, uint64_t file_size,
                                                          bool reuse, bool encrypted) {
  auto names = fs.list(dir);
  if (!names.ok()) return names.status();
  std::unique_ptr<SpareSegments> spares(new SpareSegments(fs, std::move(dir), file_size, reuse));
  for (const std::string& name : *names) {
    const auto id = parse_spare_file_name(name);
    if (!id) continue;
    const std::string path = spares->dir_ + "/" + name;
    auto file = fs.open(path, OpenMode::kRead);
    const SpareHeader header = file.ok() ? spare_header(**file) : SpareHeader::kForeign;
    if (header == SpareHeader::kForeign) {
      report("left alone: " + path + " is named like a spare segment file but does not begin as one");
      continue;
    }
    bool fits = reuse && spares->kept_.size() < kMaxSpares && (!encrypted || header == SpareHeader::kEncrypted);
    if (fits) {
      auto size = (*file)->size();
      auto links = fs.link_count(path);
      fits = size.ok() && *size == file_size && links.ok() && *links == 1;
    }
    (fits ? spares->kept_ : spares->excess_)[*id] = path;
  }
  return spares;
}

void SpareSegments::trim() {
  std::map<uint64_t, std::string> excess;
  {
    std::lock_guard lock(mu_);
    excess.swap(excess_);
  }
  if (excess.empty()) return;
  for (const auto& [id, path] : excess) {
    if (Status removed = fs_.remove(path); !removed.ok()) {
      report("removing the spare segment file " + path + " failed: " + removed.to_string());
    }
  }
  fs_.sync_dir(dir_).ignore();
}

bool SpareSegments::offer(const std::string& path, uint64_t id) {
  {
    std::lock_guard lock(mu_);
    if (!reuse_ || kept_.size() >= kMaxSpares) return false;
  }
  return rename_to_spare(path, id);
}

bool SpareSegments::park(const std::string& path, uint64_t id) { return rename_to_spare(path, id); }

bool SpareSegments::rename_to_spare(const std::string& path, uint64_t id) {
  // A second name means CDC or an archive command still holds the file;
  // without an answer, assume one does.
  auto links = fs_.link_count(path);
  if (!links.ok() || *links != 1) return false;
  const std::string spare = dir_ + "/" + spare_file_name(id);
  if (!fs_.rename(path, spare).ok()) return false;
  std::lock_guard lock(mu_);
  (reuse_ ? kept_ : excess_)[id] = spare;
  return true;
}

std::optional<std::string> SpareSegments::take() {
  std::lock_guard lock(mu_);
  if (kept_.empty()) return std::nullopt;
  auto oldest = kept_.begin();
  std::string path = std::move(oldest->second);
  kept_.erase(oldest);
  return path;
}

uint64_t SpareSegments::bytes() const {
  std::lock_guard lock(mu_);
  return kept_.size() * file_size_;
}

size_t SpareSegments::count() const {
  std::lock_guard lock(mu_);
  return kept_.size();
}

}  // namespace commitlog
