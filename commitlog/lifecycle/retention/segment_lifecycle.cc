// SPDX-License-Identifier: Apache-2.0
#include "commitlog/lifecycle/retention/segment_lifecycle.h"

#include <map>
#include <utility>

#include "commitlog/lifecycle/access_mode.h"
#include "segment/file_name.h"

namespace commitlog {

SegmentLifecycle::SegmentLifecycle(const Options& options, ArchiveHook archive, const SegmentChain& chain,
                                   SpareSegments* spares)
    : fs_(*options.file_system),
      dir_(options.directory),
      chain_(chain),
      registry_(chain, spares, options.segment_size, writes_sections(options), static_cast<bool>(archive)),
      requester_(options, registry_),
      throttle_(*options.clock, options.total_space_hard_limit, options.total_space_max_delay,
                [this] { return registry_.pressure_bytes(); }),
      settler_(options, std::move(archive), registry_),
      reclaimer_(options, chain, spares, registry_, throttle_, requester_.soft_limit()),
      thread_(*options.clock, [this] { return pass(); }) {}

SegmentLifecycle::~SegmentLifecycle() { stop(); }

Status SegmentLifecycle::start() {
  auto files = list_segment_files(fs_, dir_);
  if (!files.ok()) return files.status();
  std::map<uint64_t, SegmentRegistry::Record> old;
  for (const SegmentFile& file : *files) {
    if (file.id >= chain_.first_id()) continue;  // this process's
    auto f = fs_.open(file.path, OpenMode::kRead);
    if (!f.ok()) return f.status();
    auto size = (*f)->size();
    if (!size.ok()) return size.status();
    SegmentRegistry::Record& r = old[file.id];
    r.path = file.path;
    r.bytes = *size;
    r.sized = true;
  }
  thread_.start(registry_.add_old(std::move(old)));
  return {};
}

void SegmentLifecycle::stop() {
  if (!thread_.request_stop()) return;
  throttle_.close();
  thread_.join();
}

void SegmentLifecycle::park_empty_last() {
  if (thread_.stopped()) reclaimer_.park_empty_last();
}

void SegmentLifecycle::on_finished(const MappedSegment& segment) {
  registry_.add_finished(segment);
  thread_.wake();
}

void SegmentLifecycle::discard(uint32_t table, Position up_to) {
  registry_.discard(table, up_to);
  thread_.wake();
}

LifecycleCounters SegmentLifecycle::counters() const {
  LifecycleCounters c;
  c.total_bytes = registry_.total_bytes();
  c.segments = registry_.segments();
  c.deleted = reclaimer_.deleted();
  c.recycled = reclaimer_.recycled();
  c.spares = reclaimer_.spares();
  c.archived = settler_.archived();
  c.archive_failures = settler_.archive_failures();
  c.delete_failures = reclaimer_.delete_failures();
  c.flush_requests = requester_.requests();
  return c;
}

std::optional<Duration> SegmentLifecycle::pass() {
  settler_.learn();
  settler_.seal();
  settler_.archive();
  reclaimer_.remove_clean();
  return requester_.request();
}

}  // namespace commitlog
