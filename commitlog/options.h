// Everything an embedder can set when opening a CommitLog. Config files
// (commitlog/config.h) produce one of these; code may also fill it directly.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "policies/registry.h"
#include "segment/file_system.h"

namespace commitlog {

enum class Compression { kNone, kLz4 };

// What the log does when a sync, allocation or write fails (commit_failure_policy).
enum class CommitFailurePolicy {
  kStop,        // refuse every further append with the error (default)
  kStopCommit,  // same as stop for a library: there is no transport to stop
  kDie,         // abort the process
  kIgnore,      // log and continue; the failed sync's waiters still get the error.
                // Risks losing acknowledged data on the next crash.
};

struct Options {
  std::string directory = "data/commitlog";  // commitlog_directory
  std::string sync_policy = "periodic";      // commitlog_sync
  PolicySettings policy;                     // periods and windows
  uint64_t segment_size = 32ull << 20;       // commitlog_segment_size
  // Largest accepted mutation payload; unset means segment_size / 2.
  std::optional<uint64_t> max_mutation_size;  // max_mutation_size
  Compression compression = Compression::kNone;  // commitlog_compression
  // Segment-sized buffers compressed segments may hold at once
  // (commitlog_max_compression_buffers_in_pool): the memory bound of compression.
  uint64_t max_compression_buffers_in_pool = 3;
  uint64_t total_space = 0;  // commitlog_total_space; 0: unlimited
  CommitFailurePolicy commit_failure_policy = CommitFailurePolicy::kStop;

  // Not from config: the file system every byte goes through. Must outlive
  // the log. Tests substitute a fault-injecting one.
  FileSystem* file_system = posix_file_system();

  uint64_t effective_max_mutation_size() const {
    return max_mutation_size.value_or(segment_size / 2);
  }
};

}  // namespace commitlog
