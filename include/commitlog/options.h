// SPDX-License-Identifier: Apache-2.0
// Public API. Everything an embedder can set when opening a CommitLog. Config files
// (commitlog/config.h) produce one of these; code may also fill it directly.
#pragma once

// One clear message instead of a page of errors from C++20 library features.
#if __cplusplus < 202002L
#error "commitlog needs C++20: compile with -std=c++20 or later"
#else

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "commitlog/cdc_options.h"
#include "commitlog/clock.h"
#include "commitlog/export.h"
#include "commitlog/file_system.h"
#include "commitlog/key_provider.h"
#include "commitlog/policy_registry.h"

namespace commitlog {

enum class Compression { kNone, kLz4 };

// How segments are written to their files (commitlog_disk_access_mode),
// with Cassandra 5's names and meaning.
enum class DiskAccessMode {
  kLegacy,    // Cassandra 4's: mmap for plain segments, standard for compressed ones
  kAuto,      // chosen at open: direct where the directory has O_DIRECT, else legacy
  kMmap,      // a shared mapping of the file, made durable with msync; plain only
  kStandard,  // each flush's bytes with a buffered pwrite, then fdatasync
  kDirect,    // each flush's blocks with O_DIRECT, then made durable
};
// The yaml value of each mode.
inline constexpr std::array<std::pair<std::string_view, DiskAccessMode>, 5> kDiskAccessModes = {{
    {"legacy", DiskAccessMode::kLegacy},
    {"auto", DiskAccessMode::kAuto},
    {"mmap", DiskAccessMode::kMmap},
    {"standard", DiskAccessMode::kStandard},
    {"direct", DiskAccessMode::kDirect},
}};

// The longest Options::spin_wait: a spin that long is no longer a wait for a
// hand-off.
inline constexpr Duration kMaxSpinWait = std::chrono::milliseconds(10);

// The smallest non-zero direct_write_threshold: below a page a copy always
// costs less than the direct route's system call or LZ4 call and allocation.
inline constexpr uint64_t kMinDirectWriteThreshold = 4096;

// What the log does when a sync, allocation or write fails (commit_failure_policy).
enum class CommitFailurePolicy {
  kStop,        // refuse every further append with the error (default)
  kStopCommit,  // same as stop for a library: there is no transport to stop
  kDie,         // abort the process
  kIgnore,      // log and continue; the failed sync's waiters still get the error.
                // Risks losing acknowledged data on the next crash.
};

// The log's callbacks below run on its own threads: they must not throw (an
// exception there ends the process) and must not call CommitLog::close()
// (which refuses: it would wait for the thread it is called on).
//
// Asks the embedder to flush these tables (and then discard them, see
// CommitLog::discard) because the log is over commitlog_total_space.
using FlushRequest = std::function<void(std::vector<uint32_t> tables)>;
// Archives one finished segment file: `path` is where it is, `name` its file
// name. Must tolerate running again for a segment it archived before (a crash
// between archiving and deleting a segment archives it again).
using ArchiveHook = std::function<Status(const std::string& path, const std::string& name)>;

// One rule an Options value breaks (Options::validate()). `key` is the yaml
// key of the value at fault (new-style name), or "file_system" or "clock"
// for a null pointer, `message` the rule it breaks
// ("must be greater than 0 when commitlog_sync is group"), `depends_on` the
// other key that makes it fail, if any ("commitlog_sync").
struct COMMITLOG_EXPORT OptionError {
  std::string key;
  std::string message;
  std::string depends_on;
};

struct COMMITLOG_EXPORT Options {
  std::string directory = "data/commitlog";  // commitlog_directory
  std::string sync_policy = "periodic";      // commitlog_sync
  PolicySettings policy;                     // periods and windows
  uint64_t segment_size = 32ull << 20;       // commitlog_segment_size
  // Largest accepted mutation payload; unset means segment_size / 2.
  std::optional<uint64_t> max_mutation_size;  // max_mutation_size
  Compression compression = Compression::kNone;  // commitlog_compression
  // Segment-sized buffers compressed segments, and those written standard or
  // direct, may hold at once (commitlog_max_compression_buffers_in_pool):
  // the memory bound of segments that are not mapped.
  uint64_t max_compression_buffers_in_pool = 3;
  DiskAccessMode disk_access_mode = DiskAccessMode::kLegacy;  // commitlog_disk_access_mode
  // Payloads of at least this many bytes bypass the segment's image
  // (commitlog_ext_direct_write_threshold; 0: never): a plain segment gets
  // them with one pwrite instead of a copy through the mapping, a compressed
  // one compresses them on the producer's thread and stores them as their own
  // section instead of copying them into the pooled buffer. 0 or at least 4 KiB.
  uint64_t direct_write_threshold = 1ull << 20;
  // Soft cap on the log's size (commitlog_total_space; 0: none): over it the
  // log asks on_flush_request to flush the tables of the oldest segments.
  uint64_t total_space = 0;
  // Hard cap (commitlog_ext_total_space_hard_limit; 0: none). From 90% of it
  // appends are delayed, up to total_space_max_delay at the cap; at the cap
  // they wait for space (docs/guide.md, "Sizing"). At least twice
  // segment_size, and at least total_space. With no total_space, flushes are
  // requested from 75% of it.
  uint64_t total_space_hard_limit = 0;
  Duration total_space_max_delay = std::chrono::milliseconds(10);  // commitlog_ext_total_space_max_delay
  // A commitlog_archiving.properties file (commitlog_ext_archiving_properties;
  // docs/guide.md, "Archiving and restore"); empty: no archiving.
  std::string archiving_properties;
  CommitFailurePolicy commit_failure_policy = CommitFailurePolicy::kStop;
  // The longest a waiting producer thread spins before it sleeps on a futex
  // (commitlog_ext_spin_wait; 0: never, the default; at most 10ms). Only a
  // lone producer thread whose flushes carry its own mutation spins, and only
  // while its waits stay within this. It pays where
  // each hand-off would wake a thread on an idle CPU (a server thread
  // answering one client); it costs up to the wait in CPU per flush, and on a
  // process confined to one CPU every spin runs out and backs off.
  Duration spin_wait = Duration::zero();
  // The permission bits of the segment files and of the directories the log
  // creates (commitlog_ext_file_mode, commitlog_ext_directory_mode), less the
  // umask. The owner's alone by default; 0640 and 0750 let a backup group
  // read. The owner keeps read and write (and search on directories).
  uint32_t file_mode = kDefaultFilePermissions;
  uint32_t directory_mode = kDefaultDirectoryPermissions;
  CdcOptions cdc;  // change data capture (cdc_*)
  // Encryption at rest (transparent_data_encryption_options,
  // docs/encryption.md): the master keys; null, the default: segments are
  // written in the clear. With keys each producer seals its entry's payload
  // (every access mode; spare files are reused only if they were encrypted);
  // with commitlog_compression too, each compressed section is sealed.
  std::shared_ptr<const KeyProvider> encryption;

  // Not from config: the file system every byte goes through. Must outlive
  // the log. Tests substitute a fault-injecting one.
  FileSystem* file_system = posix_file_system();
  // Not from config: every time the log reads, sleeps until or stamps into
  // an entry. Must outlive the log. Tests substitute a manual clock.
  Clock* clock = real_clock();
  // Not from config: called on the log's own thread, with no lock held, when
  // the log is over total_space (or 75% of the hard limit). May be empty.
  FlushRequest on_flush_request;
  // Not from config: archives each finished segment instead of the
  // archive_command of archiving_properties.
  ArchiveHook archive_segment;

  uint64_t effective_max_mutation_size() const {
    return max_mutation_size.value_or(segment_size / 2);
  }

  // Every rule these options break, in conf/commitlog.yaml's key order; empty
  // when CommitLog::open may use them. Does not open the archiving file.
  [[nodiscard]] std::vector<OptionError> validate() const;
};

// validate() as a Status: kInvalidArgument with one line per problem, each
// "<key> (<value>) <message>", or ok.
[[nodiscard]] COMMITLOG_EXPORT Status check_options(const Options& options);

}  // namespace commitlog

#endif  // C++20
