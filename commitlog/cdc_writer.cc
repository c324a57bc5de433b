#include "commitlog/cdc_writer.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "segment/file_name.h"

namespace commitlog {
namespace {

constexpr uint64_t kDefaultCap = uint64_t{4096} << 20;
constexpr std::string_view kIndexSuffix = "_cdc.idx";

std::string base_name(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

void report(const std::string& line) { std::fprintf(stderr, "commitlog: cdc: %s\n", line.c_str()); }

}  // namespace

std::string cdc_index_name(const std::string& segment_name) {
  std::string stem = segment_name;
  if (stem.ends_with(".log")) stem.resize(stem.size() - 4);
  return stem + std::string(kIndexSuffix);
}

CdcWriter::CdcWriter(const Options& log)
    : fs_(*log.file_system),
      clock_(*log.clock),
      options_(log.cdc),
      dir_(cdc_raw_directory_for(log.cdc, log.directory)),
      clock_moves_(*log.clock, [this] {
        std::lock_guard lock(mu_);
        cv_.notify_all();
      }) {}

CdcWriter::~CdcWriter() { stop(); }

Status CdcWriter::start() {
  CL_RETURN_IF_ERROR(fs_.create_dirs(dir_));
  total_space_ = options_.total_space;
  if (total_space_ == 0) {
    auto volume = fs_.volume_bytes(dir_);
    total_space_ = volume.ok() ? std::min(kDefaultCap, *volume / 8) : kDefaultCap;
  }
  measure_and_make_room();
  thread_ = std::thread([this] { run(); });
  return {};
}

void CdcWriter::stop() {
  {
    std::lock_guard lock(mu_);
    if (stopped_) return;
    stopped_ = stopping_ = true;
  }
  cv_.notify_one();
  if (thread_.joinable()) thread_.join();
}

// The link is made here, before the flush's waiters wake, and synced: once a
// CDC table's append is acknowledged, a crash cannot lose its segment's link.
// One link per segment, so the flush that takes the segment's first CDC
// mutation alone pays for it.
void CdcWriter::on_durable(const MappedSegment& segment, uint64_t offset) {
  const uint64_t id = segment.id();
  if (not_captured_.count(id) != 0) {
    if (segment.finished()) not_captured_.erase(id);
    return;
  }
  auto it = linked_offsets_.find(id);
  if (it == linked_offsets_.end()) {
    const auto& tables = segment.tables();
    const bool captured = std::any_of(tables.begin(), tables.end(),
                                      [&](const TableExtent& e) { return options_.captures(e.table); });
    if (!captured) return;
    const std::string name = base_name(segment.path());
    {
      // Before the link exists: making room never deletes it.
      std::lock_guard lock(mu_);
      unfinished_.insert(id);
    }
    Status linked = fs_.link(segment.path(), dir_ + "/" + name);
    if (linked.ok()) linked = fs_.sync_dir(dir_);
    if (!linked.ok()) {
      report("linking " + segment.path() + " into " + dir_ + " failed: " + linked.to_string() +
             "; its mutations are not captured");
      failures_.fetch_add(1);
      if (!segment.finished()) not_captured_.insert(id);
      std::lock_guard lock(mu_);
      unfinished_.erase(id);
      return;
    }
    linked_.fetch_add(1);
    it = linked_offsets_.emplace(id, 0).first;
    std::lock_guard lock(mu_);
    measure_ = true;
  }
  if (offset <= it->second && !segment.finished()) return;
  it->second = offset;
  {
    std::lock_guard lock(mu_);
    due_[id] = {base_name(segment.path()), offset, segment.finished()};
  }
  if (segment.finished()) linked_offsets_.erase(it);
  cv_.notify_one();
}

Status CdcWriter::admit(uint32_t table) {
  if (!options_.block_writes || !full_.load(std::memory_order_relaxed) || !options_.captures(table)) return {};
  refused_.fetch_add(1, std::memory_order_relaxed);
  return Status::no_space("cdc_raw_directory " + dir_ + " holds " + std::to_string(raw_bytes_.load()) +
                          " bytes, over cdc_total_space of " + std::to_string(total_space_) +
                          " bytes: appends of CDC table " + std::to_string(table) +
                          " are refused until its consumer deletes what it has read (cdc_block_writes)");
}

CdcCounters CdcWriter::counters() const {
  return {raw_bytes_.load(), linked_.load(), deleted_.load(), refused_.load(), failures_.load()};
}

void CdcWriter::run() {
  std::unique_lock lock(mu_);
  TimePoint last_measure = clock_.now();
  while (true) {
    const auto due = [&] { return !due_.empty() || measure_ || stopping_; };
    wait_until(clock_, cv_, lock, last_measure + options_.free_space_check_interval, due);
    const bool stopping = stopping_;
    std::map<uint64_t, Due> todo = std::exchange(due_, {});
    lock.unlock();
    for (const auto& [id, d] : todo) write_index(d);
    if (!todo.empty()) {
      if (Status synced = fs_.sync_dir(dir_); !synced.ok()) {
        report("syncing " + dir_ + " failed: " + synced.to_string());
        failures_.fetch_add(1);
      }
    }
    lock.lock();
    for (const auto& [id, d] : todo) {
      if (d.finished) unfinished_.erase(id);
    }
    if (measure_ || clock_.now() - last_measure >= options_.free_space_check_interval) {
      measure_ = false;
      lock.unlock();
      measure_and_make_room();
      last_measure = clock_.now();
      lock.lock();
    }
    if (stopping && due_.empty()) return;
  }
}

void CdcWriter::write_index(const Due& due) {
  // The consumer may have deleted the segment already: no idx without it.
  if (!fs_.exists(dir_ + "/" + due.name)) return;
  const std::string path = dir_ + "/" + cdc_index_name(due.name);
  const std::string temp = path + ".tmp";
  const std::string text = std::to_string(due.offset) + "\n" + (due.finished ? "COMPLETED\n" : "");
  Status status;
  if (fs_.exists(temp)) status = fs_.remove(temp);
  if (status.ok()) {
    auto file = fs_.open(temp, OpenMode::kCreateNew);
    status = file.ok() ? (*file)->write_at(0, std::as_bytes(std::span(text.data(), text.size()))) : file.status();
    if (status.ok()) status = (*file)->sync();
  }
  if (status.ok()) status = fs_.rename(temp, path);
  if (!status.ok()) {
    report("writing " + path + " failed: " + status.to_string());
    failures_.fetch_add(1);
  }
}

void CdcWriter::measure_and_make_room() {
  auto names = fs_.list(dir_);
  if (!names.ok()) {
    report("listing " + dir_ + " failed: " + names.status().to_string());
    failures_.fetch_add(1);
    return;
  }
  struct Entry {
    uint64_t id;
    std::string name;
    uint64_t bytes;  // the segment's and its idx file's
  };
  std::map<uint64_t, Entry> segments;
  uint64_t total = 0;
  auto size_of = [&](const std::string& name) -> uint64_t {
    auto f = fs_.open(dir_ + "/" + name, OpenMode::kRead);
    if (!f.ok()) return 0;
    auto size = (*f)->size();
    return size.ok() ? *size : 0;
  };
  for (const std::string& name : *names) {
    const uint64_t bytes = size_of(name);
    total += bytes;
    auto id = parse_segment_file_name(name);
    if (id.ok() && *id) segments[**id] = {**id, name, bytes};
  }
  if (total > total_space_ && !options_.block_writes) {
    std::set<uint64_t> keep;
    {
      std::lock_guard lock(mu_);
      keep = unfinished_;
    }
    bool removed = false;
    for (auto& [id, entry] : segments) {
      if (total <= total_space_) break;
      if (keep.count(id) != 0) continue;
      const std::string index = cdc_index_name(entry.name);
      const uint64_t index_bytes = size_of(index);
      Status status = fs_.remove(dir_ + "/" + entry.name);
      if (status.ok() && fs_.exists(dir_ + "/" + index)) status = fs_.remove(dir_ + "/" + index);
      if (!status.ok()) {
        report("deleting " + entry.name + " from " + dir_ + " failed: " + status.to_string());
        failures_.fetch_add(1);
        continue;
      }
      removed = true;
      total -= std::min(total, entry.bytes + index_bytes);
      deleted_.fetch_add(1);
      report("deleted " + entry.name + " and its index from " + dir_ + " to stay within cdc_total_space of " +
             std::to_string(total_space_) + " bytes (cdc_block_writes: false)");
    }
    if (removed) {
      if (Status synced = fs_.sync_dir(dir_); !synced.ok()) report("syncing " + dir_ + " failed: " + synced.to_string());
    }
  }
  raw_bytes_.store(total);
  full_.store(total > total_space_);
}

}  // namespace commitlog
