// Change data capture (commitlog/cdc_options.h): links the segments that
// receive mutations of CDC tables into cdc_raw, keeps each one's
// `_cdc.idx` file at the offset up to which it is durable, and keeps cdc_raw
// within cdc_total_space.
//
// When. The sync thread calls on_durable() after each successful commit. A
// segment whose tables (learned while sealing) include a CDC table is linked
// there and then, before the flush's waiters wake: an acknowledged mutation
// of a CDC table is always in a linked segment. Its idx file is rewritten on
// this writer's own thread, which coalesces flushes: the offset it holds
// trails the log's durable position, never leads it. Each rewrite is a new
// file renamed over the old one, then the directory synced, so a consumer
// reads either the old offset or the new one.
//
// Space. cdc_raw's size is its files' sizes summed, measured on this thread
// every free_space_check_interval and after each link. Over total_space,
// with block_writes, admit() refuses CDC tables' appends until the consumer
// deletes files; without it, the oldest finished segments in cdc_raw and their
// idx files are deleted until it fits, each counted and logged.
//
// Threads: on_durable() on the sync thread; admit() and the accessors on any
// thread; its own thread writes idx files, measures and deletes.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "commitlog/clock_wait.h"
#include "commitlog/commit_observer.h"
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
  uint64_t total_space() const { return total_space_; }
  CdcCounters counters() const;

 private:
  struct Due {
    std::string name;  // the segment's file name
    uint64_t offset = 0;
    bool finished = false;
  };
  void run();
  void write_index(const Due& due);
  void measure_and_make_room();

  FileSystem& fs_;
  Clock& clock_;
  const CdcOptions options_;
  const std::string dir_;
  uint64_t total_space_ = 0;
  std::atomic<bool> full_{false};
  std::atomic<uint64_t> raw_bytes_{0}, linked_{0}, deleted_{0}, refused_{0}, failures_{0};

  // Sync-thread state: per linked, unfinished segment the offset last queued.
  std::map<uint64_t, uint64_t> linked_offsets_;
  std::set<uint64_t> not_captured_;  // unfinished segments that failed to link

  std::mutex mu_;
  std::condition_variable cv_;
  std::map<uint64_t, Due> due_;       // by segment id; guarded by mu_
  std::set<uint64_t> unfinished_;     // linked, not finished: never deleted; guarded by mu_
  bool measure_ = false;              // guarded by mu_
  bool stopping_ = false;             // guarded by mu_
  bool stopped_ = false;              // guarded by mu_
  ClockSubscription clock_moves_;  // wakes run() for a measure due on the clock
  std::thread thread_;
};

// `<segment name minus .log>_cdc.idx`.
std::string cdc_index_name(const std::string& segment_name);

}  // namespace commitlog
