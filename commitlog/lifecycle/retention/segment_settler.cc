// SPDX-License-Identifier: Apache-2.0
#include "commitlog/lifecycle/retention/segment_settler.h"

#include <optional>
#include <utility>

#include "commitlog/replay/segment_tables.h"
#include "commitlog/util/report.h"
#include "segment/file_name.h"
#include "segment/segment_seal.h"

namespace commitlog {

SegmentSettler::SegmentSettler(const Options& options, ArchiveHook archive, SegmentRegistry& registry)
    : fs_(*options.file_system), keys_(options.encryption), archive_(std::move(archive)), registry_(registry) {}

void SegmentSettler::learn() {
  const std::vector<SegmentRegistry::Unlearned> todo = registry_.unlearned();
  bool scanned = false;
  for (const SegmentRegistry::Unlearned& t : todo) {
    std::optional<SegmentTables> tables;
    if (t.scan) {
      scanned = true;
      auto read = read_segment_tables(fs_, t.file, &buffer_, keys_.get());
      if (read.ok()) {
        tables = std::move(read).value();
      } else {
        tables.emplace().damage = read.status().to_string();
      }
      if (!tables->damage.empty()) {
        report(t.file.path + ": " + tables->damage + "; the log keeps this segment and never deletes it");
      }
    }
    std::optional<uint64_t> size;
    if (t.size) {
      auto f = fs_.open(t.file.path, OpenMode::kRead);
      if (f.ok()) {
        auto s = (*f)->size();
        if (s.ok()) size = *s;
      }
    }
    registry_.learned(t.file.id, std::move(tables), size);
  }
  if (scanned) buffer_ = {};  // old segments are read once; do not hold a segment's worth of memory
}

void SegmentSettler::seal() {
  for (const auto& [file, end] : registry_.unsealed()) {
    const Status sealed = write_seal(fs_, file.path, file.id, end);
    if (!sealed.ok()) report("sealing " + file.path + " failed: " + sealed.to_string() + "; its tail stays unproved");
    registry_.sealed(file.id);
  }
}

void SegmentSettler::archive() {
  if (!archive_) return;
  for (const SegmentFile& file : registry_.unarchived()) {
    const Status archived = archive_(file.path, base_name(file.path));
    if (!archived.ok()) {
      report("archiving " + file.path + " failed: " + archived.to_string() + "; the segment is kept");
    }
    (archived.ok() ? archived_ : archive_failures_).fetch_add(1);
    registry_.archived(file.id, archived.ok());
  }
}

}  // namespace commitlog
