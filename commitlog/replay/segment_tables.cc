// SPDX-License-Identifier: Apache-2.0
#include "commitlog/replay/segment_tables.h"

#include <map>
#include <variant>

#include "commitlog/replay/segment_replay.h"
#include "segment/segment_image.h"
#include "segment/segment_reader.h"

namespace commitlog {

Result<SegmentTables> read_segment_tables(FileSystem& fs, const SegmentFile& file,
                                          std::vector<std::byte>* buffer, const KeyProvider* keys) {
  auto prologue = read_prologue(fs, file);
  if (!prologue.ok()) return prologue.status();
  const SegmentHeader& header = prologue->header;
  SegmentTables out;
  if (prologue->problem == HeaderProblem::kAllZero) {
    auto scan = scan_unreadable_segment(fs, file, buffer);
    if (!scan.ok()) return scan.status();
    if (scan->nonzero_end == 0) return out;
  }
  if (prologue->problem != HeaderProblem::kNone) {
    out.damage = header_problem_name(prologue->problem);
    return out;
  }
  if (header.id != file.id) {
    out.damage = "the header names segment " + std::to_string(header.id);
    return out;
  }
  auto file_size = read_segment_bytes(fs, file, header, buffer);
  if (!file_size.ok()) return file_size.status();
  const SegmentImage image = load_segment_image(*buffer, header, keys, *file_size);
  if (!image.key_status.ok()) {
    out.damage = image.key_status.message();
    return out;
  }
  // Damage no later write proves durable (the reader counts damage below a
  // seal as durable) is a torn tail: nothing acknowledged lies in or after
  // it, and every entry the reader found after it still counts. Intact, as
  // the contract says; durable damage keeps the segment for the operator.
  for (const SectionDamage& d : image.damage) {
    if (out.damage.empty() && d.durable) out.damage = damage_kind_name(d.kind);
  }
  std::map<uint32_t, uint64_t> last;
  SegmentReader reader(image, header);
  while (true) {
    SegmentItem item = reader.next();
    if (auto* entry = std::get_if<SegmentEntry>(&item)) {
      last[entry->table] = entry->offset;
    } else if (auto* bad = std::get_if<SegmentDamage>(&item)) {
      if (out.damage.empty() && bad->durable) out.damage = damage_kind_name(bad->kind);
    } else {
      break;
    }
  }
  for (const auto& [table, offset] : last) out.tables.push_back({table, offset});
  return out;
}

}  // namespace commitlog
