// SPDX-License-Identifier: Apache-2.0
#include "commitlog/lifecycle/crashed_run_seal.h"

#include <optional>
#include <variant>
#include <vector>

#include "commitlog/replayer.h"
#include "commitlog/replay/segment_replay.h"
#include "segment/format.h"
#include "segment/segment_image.h"
#include "segment/segment_reader.h"
#include "segment/segment_seal.h"

namespace commitlog {
namespace {

// Where the default recovery mode stops reading the newest segment of a run:
// at its first damage that is not durable (the torn tail), else at its end.
// nullopt when durable damage makes it corrupt.
std::optional<uint64_t> data_end(const SegmentImage& image, const SegmentHeader& header) {
  for (const SectionDamage& d : image.damage) {
    if (d.durable) return std::nullopt;
  }
  SegmentReader reader(image, header);
  while (true) {
    const SegmentItem item = reader.next();
    if (std::holds_alternative<SegmentEntry>(item)) continue;
    if (const auto* damage = std::get_if<SegmentDamage>(&item)) {
      return damage->durable ? std::nullopt : std::optional<uint64_t>(damage->offset);
    }
    const auto& end = std::get<SegmentEnd>(item);
    return end.kind == EndKind::kClosed ? end.offset + format::kMarkerSize : end.offset;
  }
}

}  // namespace

Status seal_crashed_runs(FileSystem& fs, const std::string& dir, const KeyProvider* keys) {
  auto files = list_segment_files(fs, dir);
  if (!files.ok()) return files.status();
  std::vector<SegmentPrologue> prologues;
  for (const SegmentFile& file : *files) {
    auto p = read_prologue(fs, file);
    if (!p.ok()) return p.status();
    prologues.push_back(std::move(p).value());
  }
  mark_run_ends(prologues);
  std::vector<std::byte> buffer;
  for (const SegmentPrologue& p : prologues) {
    const bool unsealed_v2 = p.problem == HeaderProblem::kNone && p.header.id == p.file.id &&
                             p.header.version >= 2 && p.header.sealed_end == 0 && !p.header.seal_damaged;
    if (!p.may_be_torn || !p.has_data || !unsealed_v2) continue;
    auto file_size = read_segment_bytes(fs, p.file, p.header, &buffer);
    if (!file_size.ok()) return file_size.status();
    const SegmentImage image = load_segment_image(buffer, p.header, keys, *file_size);
    if (!image.key_status.ok()) return Status(image.key_status.code(), p.file.path + ": " + image.key_status.message());
    const std::optional<uint64_t> end = data_end(image, p.header);
    if (end) CL_RETURN_IF_ERROR(write_seal(fs, p.file.path, p.file.id, *end));
  }
  return {};
}

}  // namespace commitlog
