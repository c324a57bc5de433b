// SPDX-License-Identifier: Apache-2.0
// Change data capture (commitlog/cdc_options.h): links the segments that
// receive mutations of CDC tables into cdc_raw, keeps each one's
// `_cdc.idx` file at the offset up to which it is durable, and keeps cdc_raw
// within cdc_total_space.
//
// When. The round calls on_durable() after each successful commit. A
// segment whose tables (learned while sealing) include a CDC table is linked
// there and then, before the flush's waiters wake: an acknowledged mutation
// of a CDC table is always in a linked segment. Its idx file is rewritten on
// this writer's own thread, which coalesces flushes: the offset it holds
// trails the log's durable position, never leads it. Each rewrite is a new
// file renamed over the old one, then the directory synced, so a consumer
// reads either the old offset or the new one.
//
// Space: CdcSpace (cdc_space.h) measures cdc_raw on this writer's thread
// every free_space_check_interval and after each link, and keeps it within
// cdc_total_space.
//
// Permissions: cdc_raw, when created, gets the log's directory_mode and each
// idx file its file_mode (less the umask); a link shares its segment's.
//
// Threads: on_durable() by the round; admit() and the accessors on any
// thread; its own thread writes idx files, measures and deletes.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "commitlog/cdc/cdc_linker.h"
#include "commitlog/cdc/cdc_space.h"
#include "commitlog/util/clock_wait.h"
#include "commitlog/cdc/commit_observer.h"
#include "commitlog/options.h"

namespace commitlog {

struct CdcCounters {
  uint64_t raw_bytes = 0;          // cdc_raw's size at the last measure
  uint64_t segments_linked = 0;
  uint64_t segments_deleted = 0;   // for space, block_writes false
  uint64_t appends_refused = 0;    // for space, block_writes true
  uint64_t failures = 0;           // links, idx writes or deletions that failed
};

class CdcWriter final : public CommitObserver {
 public:
  // `log` must outlive the writer; options.cdc.enabled.
  explicit CdcWriter(const Options& log);
  ~CdcWriter() override;  // stop()

  // Creates cdc_raw, resolves total_space, measures, starts the thread.
  [[nodiscard]] Status start();
  // Writes the idx files still due and stops the thread. Call after the sync
  // thread stopped. Idempotent.
  void stop();

  void on_durable(const MappedSegment& segment, uint64_t offset) override;
  // Producers: ok, or kNoSpace when `table` is a CDC table and cdc_raw is full
  // with block_writes.
  [[nodiscard]] Status admit(uint32_t table);

  const std::string& directory() const { return dir_; }
  uint64_t total_space() const { return space_.total_space(); }
  CdcCounters counters() const;

 private:
  void run();
  void write_index(const CdcIndexUpdate& update);

  const Options& log_;
  const std::string dir_;
  CdcSpace space_;
  CdcLinker linker_;  // the round's
  std::atomic<uint64_t> failures_{0};  // idx writes and syncs of cdc_raw

  std::mutex mu_;
  std::condition_variable cv_;
  std::map<uint64_t, CdcIndexUpdate> due_;  // by segment id; guarded by mu_
  bool measure_ = false;                    // guarded by mu_
  bool stopping_ = false;                   // guarded by mu_
  ClockSubscription clock_moves_;  // wakes run() for a measure due on the clock
  std::thread thread_;
};

inline constexpr std::string_view kCdcIndexSuffix = "_cdc.idx";
// `<segment name minus .log>_cdc.idx`; of a path, the index's path beside it.
std::string cdc_index_name(const std::string& segment_name);

}  // namespace commitlog
