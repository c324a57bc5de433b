// SPDX-License-Identifier: Apache-2.0
// The space policy of cdc_raw (commitlog/cdc_options.h). Its size is its
// files' sizes summed, as measure() last found them. Over total_space, with
// block_writes, admit() refuses CDC tables' appends until the consumer
// deletes files; without it, measure() deletes the oldest segments in
// cdc_raw and their idx files until it fits, each counted and logged, but
// never a segment held (linked and not yet finished).
//
// Threads: hold(), release(), admit() and the accessors on any thread;
// resolve_total_space() and measure() on one thread at a time.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <set>
#include <string>

#include "commitlog/cdc_options.h"
#include "commitlog/file_system.h"

namespace commitlog {

class CdcSpace {
 public:
  // `fs` must outlive this.
  CdcSpace(FileSystem& fs, std::string dir, const CdcOptions& options);

  // total_space, or when that is 0 min(4096MiB, 1/8 of the volume holding
  // the directory, which must exist).
  void resolve_total_space();
  // Measures cdc_raw and, without block_writes, deletes until it fits.
  void measure();
  // A held segment is never deleted by measure(); hold it before it is linked.
  void hold(uint64_t segment_id);
  void release(uint64_t segment_id);

  // Producers of a CDC table: ok, or kNoSpace while cdc_raw is full with
  // block_writes.
  [[nodiscard]] Status admit(uint32_t table);

  uint64_t total_space() const { return total_space_; }
  uint64_t raw_bytes() const { return raw_bytes_.load(); }
  uint64_t deleted() const { return deleted_.load(); }
  uint64_t refused() const { return refused_.load(); }
  uint64_t failures() const { return failures_.load(); }  // listings and deletions

 private:
  uint64_t size_of(const std::string& name);

  FileSystem& fs_;
  const std::string dir_;
  const bool block_writes_;
  uint64_t total_space_;
  std::mutex mu_;
  std::set<uint64_t> held_;  // guarded by mu_
  std::atomic<bool> full_{false};
  std::atomic<uint64_t> raw_bytes_{0}, deleted_{0}, refused_{0}, failures_{0};
};

}  // namespace commitlog
