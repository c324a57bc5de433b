// SPDX-License-Identifier: Apache-2.0
#include "commitlog/cdc/cdc_space.h"

#include <algorithm>
#include <map>

#include "commitlog/cdc/cdc_writer.h"
#include "commitlog/util/report.h"
#include "segment/file_name.h"

namespace commitlog {
namespace {

constexpr uint64_t kDefaultCap = uint64_t{4096} << 20;

}  // namespace

CdcSpace::CdcSpace(FileSystem& fs, std::string dir, const CdcOptions& options)
    : fs_(fs), dir_(std::move(dir)), block_writes_(options.block_writes), total_space_(options.total_space) {}

void CdcSpace::resolve_total_space() {
  if (total_space_ != 0) return;
  auto volume = fs_.volume_bytes(dir_);
  total_space_ = volume.ok() ? std::min(kDefaultCap, *volume / 8) : kDefaultCap;
}

void CdcSpace::hold(uint64_t segment_id) {
  std::lock_guard lock(mu_);
  held_.insert(segment_id);
}

void CdcSpace::release(uint64_t segment_id) {
  std::lock_guard lock(mu_);
  held_.erase(segment_id);
}

Status CdcSpace::admit(uint32_t table) {
  if (!block_writes_ || !full_.load(std::memory_order_relaxed)) return {};
  refused_.fetch_add(1, std::memory_order_relaxed);
  return Status::no_space("cdc_raw_directory " + dir_ + " holds " + std::to_string(raw_bytes_.load()) +
                          " bytes, over cdc_total_space of " + std::to_string(total_space_) +
                          " bytes: appends of CDC table " + std::to_string(table) +
                          " are refused until its consumer deletes what it has read (cdc_block_writes)");
}

uint64_t CdcSpace::size_of(const std::string& name) {
  auto f = fs_.open(dir_ + "/" + name, OpenMode::kRead);
  if (!f.ok()) return 0;
  auto size = (*f)->size();
  return size.ok() ? *size : 0;
}

void CdcSpace::measure() {
  auto names = fs_.list(dir_);
  if (!names.ok()) {
    report("cdc: listing " + dir_ + " failed: " + names.status().to_string());
    failures_.fetch_add(1);
    return;
  }
  struct Entry {
    std::string name;
    uint64_t bytes;  // the segment's
  };
  std::map<uint64_t, Entry> segments;  // oldest first
  uint64_t total = 0;
  for (const std::string& name : *names) {
    const uint64_t bytes = size_of(name);
    total += bytes;
    auto id = parse_segment_file_name(name);
    if (id.ok() && *id) segments[**id] = {name, bytes};
  }
  if (total > total_space_ && !block_writes_) {
    std::set<uint64_t> held;
    {
      std::lock_guard lock(mu_);
      held = held_;
    }
    bool removed = false;
    for (auto& [id, entry] : segments) {
      if (total <= total_space_) break;
      if (held.count(id) != 0) continue;
      const std::string index = cdc_index_name(entry.name);
      const uint64_t index_bytes = size_of(index);
      Status status = fs_.remove(dir_ + "/" + entry.name);
      if (status.ok() && fs_.exists(dir_ + "/" + index)) status = fs_.remove(dir_ + "/" + index);
      if (!status.ok()) {
        report("cdc: deleting " + entry.name + " from " + dir_ + " failed: " + status.to_string());
        failures_.fetch_add(1);
        continue;
      }
      removed = true;
      total -= std::min(total, entry.bytes + index_bytes);
      deleted_.fetch_add(1);
      report("cdc: deleted " + entry.name + " and its index from " + dir_ + " to stay within cdc_total_space of " +
             std::to_string(total_space_) + " bytes (cdc_block_writes: false)");
    }
    if (removed) {
      if (Status synced = fs_.sync_dir(dir_); !synced.ok()) report("cdc: syncing " + dir_ + " failed: " + synced.to_string());
    }
  }
  raw_bytes_.store(total);
  full_.store(total > total_space_);
}

}  // namespace commitlog
