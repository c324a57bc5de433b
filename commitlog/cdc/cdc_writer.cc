// SPDX-License-Identifier: Apache-2.0
#include "commitlog/cdc/cdc_writer.h"

#include "commitlog/util/report.h"

namespace commitlog {

std::string cdc_index_name(const std::string& segment_name) {
  std::string stem = segment_name;
  if (stem.ends_with(".log")) stem.resize(stem.size() - 4);
  return stem + std::string(kCdcIndexSuffix);
}

CdcWriter::CdcWriter(const Options& log)
    : log_(log),
      dir_(cdc_raw_directory_for(log.cdc, log.directory)),
      space_(*log.file_system, dir_, log.cdc),
      linker_(*log.file_system, dir_, log.cdc, space_),
      clock_moves_(*log.clock, [this] {
        std::lock_guard lock(mu_);
        cv_.notify_all();
      }) {}

CdcWriter::~CdcWriter() { stop(); }

Status CdcWriter::start() {
  CL_RETURN_IF_ERROR(log_.file_system->create_dirs(dir_, log_.directory_mode));
  space_.resolve_total_space();
  space_.measure();
  thread_ = std::thread([this] { run(); });
  return {};
}

void CdcWriter::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void CdcWriter::on_durable(const MappedSegment& segment, uint64_t offset) {
  std::optional<CdcIndexUpdate> update = linker_.on_durable(segment, offset);
  if (!update) return;
  {
    std::lock_guard lock(mu_);
    if (update->linked_now) measure_ = true;
    due_[segment.id()] = std::move(*update);
  }
  cv_.notify_one();
}

Status CdcWriter::admit(uint32_t table) {
  if (!log_.cdc.captures(table)) return {};
  return space_.admit(table);
}

CdcCounters CdcWriter::counters() const {
  return {space_.raw_bytes(), linker_.linked(), space_.deleted(), space_.refused(),
          failures_.load() + linker_.failures() + space_.failures()};
}

void CdcWriter::run() {
  Clock& clock = *log_.clock;
  const auto interval = log_.cdc.free_space_check_interval;
  std::unique_lock lock(mu_);
  TimePoint last_measure = clock.now();
  while (true) {
    const auto due = [&] { return !due_.empty() || measure_ || stopping_; };
    wait_until(clock, cv_, lock, last_measure + interval, due);
    const bool stopping = stopping_;
    std::map<uint64_t, CdcIndexUpdate> todo = std::exchange(due_, {});
    const bool measure = std::exchange(measure_, false) || clock.now() - last_measure >= interval;
    lock.unlock();
    for (const auto& [id, update] : todo) write_index(update);
    if (!todo.empty()) {
      if (Status synced = log_.file_system->sync_dir(dir_); !synced.ok()) {
        report("cdc: syncing " + dir_ + " failed: " + synced.to_string());
        failures_.fetch_add(1);
      }
    }
    for (const auto& [id, update] : todo) {
      if (update.finished) space_.release(id);
    }
    if (measure) {
      space_.measure();
      last_measure = clock.now();
    }
    lock.lock();
    if (stopping && due_.empty()) return;
  }
}

// A new file renamed over the old one, so a consumer reads either offset.
void CdcWriter::write_index(const CdcIndexUpdate& update) {
  FileSystem& fs = *log_.file_system;
  // The consumer may have deleted the segment already: no idx without it.
  if (!fs.exists(dir_ + "/" + update.name)) return;
  const std::string path = dir_ + "/" + cdc_index_name(update.name);
  const std::string temp = path + ".tmp";
  const std::string text = std::to_string(update.offset) + "\n" + (update.finished ? "COMPLETED\n" : "");
  Status status;
  if (fs.exists(temp)) status = fs.remove(temp);
  if (status.ok()) {
    auto file = fs.open(temp, OpenMode::kCreateNew, log_.file_mode);
    status = file.ok() ? (*file)->write_at(0, std::as_bytes(std::span(text.data(), text.size()))) : file.status();
    if (status.ok()) status = (*file)->sync();
  }
  if (status.ok()) status = fs.rename(temp, path);
  if (!status.ok()) {
    report("cdc: writing " + path + " failed: " + status.to_string());
    failures_.fetch_add(1);
  }
}

}  // namespace commitlog
