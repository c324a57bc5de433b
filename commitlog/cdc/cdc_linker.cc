// SPDX-License-Identifier: Apache-2.0
#include "commitlog/cdc/cdc_linker.h"

#include <algorithm>

#include "commitlog/util/report.h"
#include "segment/file_name.h"

namespace commitlog {

CdcLinker::CdcLinker(FileSystem& fs, std::string dir, const CdcOptions& options, CdcSpace& space)
    : fs_(fs), dir_(std::move(dir)), options_(options), space_(space) {}

// The link is synced: once a CDC table's append is acknowledged, a crash
// cannot lose its segment's link. One link per segment, so the flush that
// takes the segment's first CDC mutation alone pays for it.
bool CdcLinker::link(const MappedSegment& segment, const std::string& name) {
  space_.hold(segment.id());  // before the link exists: making room never deletes it
  Status linked = fs_.link(segment.path(), dir_ + "/" + name);
  if (linked.ok()) linked = fs_.sync_dir(dir_);
  if (linked.ok()) {
    linked_.fetch_add(1);
    return true;
  }
  report("cdc: linking " + segment.path() + " into " + dir_ + " failed: " + linked.to_string() +
         "; its mutations are not captured");
  failures_.fetch_add(1);
  space_.release(segment.id());
  return false;
}

std::optional<CdcIndexUpdate> CdcLinker::on_durable(const MappedSegment& segment, uint64_t offset) {
  const uint64_t id = segment.id();
  if (not_captured_.count(id) != 0) {
    if (segment.finished()) not_captured_.erase(id);
    return std::nullopt;
  }
  const std::string name = base_name(segment.path());
  bool linked_now = false;
  auto it = linked_offsets_.find(id);
  if (it == linked_offsets_.end()) {
    const auto& tables = segment.tables();
    const bool captured = std::any_of(tables.begin(), tables.end(),
                                      [&](const TableExtent& e) { return options_.captures(e.table); });
    if (!captured) return std::nullopt;
    if (!link(segment, name)) {
      if (!segment.finished()) not_captured_.insert(id);
      return std::nullopt;
    }
    linked_now = true;
    it = linked_offsets_.emplace(id, 0).first;
  }
  if (offset <= it->second && !segment.finished() && !linked_now) return std::nullopt;
  it->second = offset;
  if (segment.finished()) linked_offsets_.erase(it);
  return CdcIndexUpdate{name, offset, segment.finished(), linked_now};
}

}  // namespace commitlog
