// SPDX-License-Identifier: Apache-2.0
// Public API. Change data capture, with Cassandra's keys and file layout: a
// segment that receives a mutation of a CDC table is hard-linked into
// cdc_raw_directory, beside a `<segment name minus .log>_cdc.idx` file whose
// first line is the offset up to which the segment is durable, and whose
// second line, once the segment is finished, is COMPLETED. A consumer reads
// the links up to that offset (commitlog/tail_reader.h does) and deletes what
// it has consumed; the log's discard never touches cdc_raw.
#pragma once

// One clear message instead of a page of errors from C++20 library features.
#if __cplusplus < 202002L
#error "commitlog needs C++20: compile with -std=c++20 or later"
#else

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "commitlog/export.h"

namespace commitlog {

struct COMMITLOG_EXPORT CdcOptions {
  bool enabled = false;  // cdc_enabled
  // cdc_raw_directory; empty: `cdc_raw` beside the commit log directory.
  std::string raw_directory;
  // cdc_total_space: the most cdc_raw may hold, its files' sizes summed;
  // 0: min(4096MiB, 1/8 of cdc_raw's volume).
  uint64_t total_space = 0;
  // cdc_free_space_check_interval: how often cdc_raw's size is measured again
  // (the consumer's deletions show up within this).
  std::chrono::nanoseconds free_space_check_interval = std::chrono::milliseconds(250);
  // cdc_block_writes. true: while cdc_raw is over total_space, an append of a
  // CDC table fails with kNoSpace (the other tables still append). false: the
  // oldest files in cdc_raw are deleted until it fits, counted in the metrics
  // (cdc_segments_deleted) and logged on stderr.
  bool block_writes = true;
  // The CDC tables (commitlog_ext_cdc_tables); empty: every table.
  std::vector<uint32_t> tables;

  bool captures(uint32_t table) const {
    return enabled && (tables.empty() || std::find(tables.begin(), tables.end(), table) != tables.end());
  }
};

// cdc_raw_directory as a log in `log_directory` uses it.
inline std::string cdc_raw_directory_for(const CdcOptions& cdc, const std::string& log_directory) {
  if (!cdc.raw_directory.empty()) return cdc.raw_directory;
  std::string dir = log_directory;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  const size_t slash = dir.rfind('/');
  if (slash == std::string::npos) return "cdc_raw";
  return dir.substr(0, slash + 1) + "cdc_raw";
}

}  // namespace commitlog

#endif  // C++20
