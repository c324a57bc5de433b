// SPDX-License-Identifier: Apache-2.0
#include "commitlog/config/config_keys.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "commitlog/lifecycle/access_mode.h"
#include "commitlog/policy_registry.h"
#include "commitlog/util/paths.h"

namespace commitlog::config {
namespace {

namespace cv = config_values;
using std::chrono::milliseconds;

// Cassandra reads the old group window as a double of ms, so the new name
// takes units below ms too: every value the old name can give prints and
// reads back under the new one.
constexpr DurationRule kGroupWindow{Duration(1), cv::kInt32Max * int64_t{1'000'000}, milliseconds(1), true};
constexpr SizeRule kExtBytes{1, cv::kInt32Max, 0};
// Below a page a segment is mostly header and markers; below 2048MiB as in
// Cassandra (offsets within a segment are 32-bit).
constexpr uint64_t kMinSegmentSize = 4 * cv::kKiB;
constexpr uint64_t kSegmentLimit = 2048 * cv::kMiB;
constexpr uint64_t kMaxCompressionBuffers = 1024;

constexpr Harmless kAnyValue{[](std::string_view) { return true; }, "any value"};

std::string known_policy(const Options& o) {
  const std::vector<std::string> names = PolicyRegistry::global().names();
  if (std::find(names.begin(), names.end(), o.sync_policy) != names.end()) return "";
  return fmt::format("names an unknown sync policy (known: {})", fmt::join(names, ", "));
}

std::string segment_size_rule(const Options& o) {
  if (o.segment_size >= kMinSegmentSize && o.segment_size < kSegmentLimit && o.segment_size % 8 == 0) return "";
  return "must be at least 4KiB, less than 2048MiB and a multiple of 8B";
}

std::string max_mutation_rule(const Options& o) {
  if (!o.max_mutation_size) return "";
  if (*o.max_mutation_size == 0) return "must be greater than 0";
  if (*o.max_mutation_size <= o.segment_size / 2) return "";
  return fmt::format("is more than half of commitlog_segment_size ({}); a segment must hold at least two of the "
                     "largest mutations", cv::format_size(o.segment_size));
}

std::string hard_limit_rule(const Options& o) {
  const uint64_t limit = o.total_space_hard_limit;
  if (limit != 0 && limit < 2 * o.segment_size) {
    return fmt::format("must be 0MiB (none) or at least twice commitlog_segment_size ({})",
                       cv::format_size(o.segment_size));
  }
  if (limit != 0 && limit < o.total_space) {
    return fmt::format("must be 0MiB (none) or at least commitlog_total_space ({})", cv::format_size(o.total_space));
  }
  return "";
}

std::string access_mode_rule(const Options& o) {
  if (o.disk_access_mode == DiskAccessMode::kMmap && o.compression != Compression::kNone) {
    return "cannot write compressed segments (commitlog_compression is set): use standard, direct, legacy or auto";
  }
  return "";
}

// CDC's space limit deletes segment files from cdc_raw_directory, so it must
// never be the log's own directory, however the two paths are spelled.
std::string cdc_directory_rule(const Options& o) {
  if (!o.cdc.enabled || o.cdc.raw_directory.empty()) return "";
  if (resolved_path(o.cdc.raw_directory) != resolved_path(o.directory)) return "";
  return "must not be commitlog_directory: CDC deletes segment files there";
}

// legacy and auto name the mode they come to, and direct where it is refused.
std::string access_mode_in_effect(const Options& o) {
  auto choice = choose_access_mode_before_open(o);
  if (!choice.ok()) return "refused here: " + choice.status().message();
  if (choice->reason.empty()) return "";
  return std::string(access_mode_name(choice->mode)) + ", " + choice->reason;
}

std::vector<std::pair<std::string, DiskAccessMode>> access_mode_names() {
  std::vector<std::pair<std::string, DiskAccessMode>> names;
  for (const auto& [name, mode] : kDiskAccessModes) names.emplace_back(name, mode);
  return names;
}

std::vector<KeySpec> make_keys() {
  return {
      {.name = "commitlog_directory",
       .type = text([](auto& o) -> auto& { return o.directory; }, "a directory path"),
       .doc = "Directory holding the segment files; best on a disk of its own.",
       .check = [](const Options& o) -> std::string { return o.directory.empty() ? "must not be empty" : ""; }},
      {.name = "commitlog_sync",
       .type = text([](auto& o) -> auto& { return o.sync_policy; }, "a sync policy name"),
       .doc = "When appends become durable: periodic, batch, group, adaptive, or a policy the embedder registered.",
       .check = known_policy},
      {.name = "commitlog_sync_period",
       .old_name = "commitlog_sync_period_in_ms",
       .type = duration([](auto& o) -> auto& { return o.policy.sync_period; }, kCassandraMs),
       .doc = "periodic: the time between fsyncs.",
       .check = [](const Options& o) -> std::string {
         return o.sync_policy == "periodic" && o.policy.sync_period <= Duration::zero()
                    ? "must be greater than 0 when commitlog_sync is periodic" : "";
       },
       .depends_on = "commitlog_sync"},
      {.name = "commitlog_sync_group_window",
       .old_name = "commitlog_sync_group_window_in_ms",
       .type = duration([](auto& o) -> auto& { return o.policy.group_window; }, kGroupWindow),
       .doc = "group: the least time between two fsyncs; an append waits at most this plus one fsync.",
       .check = [](const Options& o) -> std::string {
         return o.sync_policy == "group" && o.policy.group_window <= Duration::zero()
                    ? "must be greater than 0 when commitlog_sync is group" : "";
       },
       .depends_on = "commitlog_sync"},
      {.name = "periodic_commitlog_sync_lag_block",
       .old_name = "periodic_commitlog_sync_lag_block_in_ms",
       .type = duration([](auto& o) -> auto& { return o.policy.lag_block; }, kCassandraMs),
       .doc = "periodic: appends block while the last completed fsync started longer ago than this.",
       // A producer told to wait wakes after a sync starts and asks again:
       // below a millisecond it would be too late every time and wait for ever.
       // A period that is not positive is its own error, and the cause of this one.
       .check = [](const Options& o) -> std::string {
         return o.sync_policy == "periodic" && o.policy.sync_period > Duration::zero() &&
                        o.policy.lag_block < milliseconds(1)
                    ? "must be at least 1ms when commitlog_sync is periodic" : "";
       },
       .depends_on = "commitlog_sync",
       .derived_default = "1.5 x commitlog_sync_period",
       .derive = [](Options& o) { o.policy.lag_block = o.policy.sync_period + o.policy.sync_period / 2; }},
      {.name = "commitlog_segment_size",
       .old_name = "commitlog_segment_size_in_mb",
       .type = size([](auto& o) -> auto& { return o.segment_size; }, kCassandraMiB),
       .doc = "Capacity of one segment file, before compression.",
       .check = segment_size_rule},
      {.name = "max_mutation_size",
       .old_name = "max_mutation_size_in_kb",
       .type = size(Access<uint64_t>{[](const Options& o) { return o.effective_max_mutation_size(); },
                                     [](Options& o, uint64_t bytes) { o.max_mutation_size = bytes; }},
                    kCassandraKiB),
       .doc = "The largest mutation an append accepts.",
       .check = max_mutation_rule,
       .derived_default = "half of commitlog_segment_size"},
      {.name = "commitlog_compression",
       .type = compression([](auto& o) -> auto& { return o.compression; }),
       .doc = "LZ4-compress each sync section (class_name LZ4Compressor or LZ4); parameters are ignored.",
       .zero_means = "none"},
      {.name = "transparent_data_encryption_options",
       .type = encryption([](auto& o) -> auto& { return o.encryption; }),
       .doc = "Encryption at rest: each segment gets its own data key, wrapped by a master key from a key file "
              "(docs/encryption.md).",
       .zero_means = "segments in the clear"},
      {.name = "commitlog_max_compression_buffers_in_pool",
       .type = count([](auto& o) -> auto& { return o.max_compression_buffers_in_pool; }),
       .doc = "With compression, or disk access mode standard or direct: how many segment-sized buffers may exist "
              "at once (the memory bound).",
       .check = [](const Options& o) -> std::string {
         const uint64_t n = o.max_compression_buffers_in_pool;
         return n >= 1 && n <= kMaxCompressionBuffers ? "" : "must be from 1 to 1024";
       }},
      {.name = "commitlog_disk_access_mode",
       .type = choice([](auto& o) -> auto& { return o.disk_access_mode; }, "a disk access mode",
                      access_mode_names()),
       .doc = "How segments are written: mmap, standard (pwrite), direct (O_DIRECT), legacy (mmap, or standard when "
              "compressed) or auto (direct where O_DIRECT works in commitlog_directory, else legacy).",
       .check = access_mode_rule,
       .depends_on = "commitlog_compression",
       .in_effect = access_mode_in_effect},
      {.name = "commitlog_total_space",
       .old_name = "commitlog_total_space_in_mb",
       .type = size([](auto& o) -> auto& { return o.total_space; }, kCassandraMiB),
       .doc = "Soft cap on the segments' space: over it the embedder is asked to flush the oldest tables.",
       .zero_means = "unlimited"},
      {.name = "commit_failure_policy",
       .type = choice([](auto& o) -> auto& { return o.commit_failure_policy; }, "a commit failure policy",
                      {{"stop", CommitFailurePolicy::kStop},
                       {"stop_commit", CommitFailurePolicy::kStopCommit},
                       {"die", CommitFailurePolicy::kDie},
                       {"ignore", CommitFailurePolicy::kIgnore}}),
       .doc = "What the log does when a sync, an allocation or a write fails."},
      {.name = "commitlog_ext_marker_interval",
       .type = duration([](auto& o) -> auto& { return o.policy.marker_interval; }, kAnyDuration),
       .doc = "periodic: the time between replay markers written without fsync.",
       .check = [](const Options& o) -> std::string {
         return o.policy.marker_interval > Duration::zero() ? "" : "must be greater than 0";
       }},
      {.name = "commitlog_ext_adaptive_latency_cap",
       .type = duration([](auto& o) -> auto& { return o.policy.latency_cap; }, kAnyDuration),
       .doc = "adaptive: the most delay it may add to an append to group fsyncs.",
       .check = [](const Options& o) -> std::string {
         return o.policy.latency_cap >= Duration::zero() ? "" : "must not be negative";
       }},
      {.name = "commitlog_ext_total_space_hard_limit",
       .type = size([](auto& o) -> auto& { return o.total_space_hard_limit; }, kAnySize),
       .doc = "Hard cap on the segments' space: appends slow down from 90% of it and wait at it.",
       .check = hard_limit_rule,
       .zero_means = "none"},
      {.name = "commitlog_ext_total_space_max_delay",
       .type = duration([](auto& o) -> auto& { return o.total_space_max_delay; }, kAnyDuration),
       .doc = "The longest delay an append gets just below the hard cap.",
       .check = [](const Options& o) -> std::string {
         return o.total_space_max_delay >= Duration::zero() ? "" : "must not be negative";
       }},
      {.name = "commitlog_ext_archiving_properties",
       .type = text([](auto& o) -> auto& { return o.archiving_properties; }, "a file path"),
       .doc = "A commitlog_archiving.properties file in Cassandra's format.",
       .zero_means = "no archiving"},
      {.name = "commitlog_ext_direct_write_threshold",
       .type = size([](auto& o) -> auto& { return o.direct_write_threshold; }, kExtBytes),
       .doc = "Payloads of at least this size bypass the segment's in-memory image.",
       .check = [](const Options& o) -> std::string {
         const uint64_t t = o.direct_write_threshold;
         return t == 0 || t >= kMinDirectWriteThreshold ? "" : "must be 0B (off) or at least 4KiB";
       },
       .zero_means = "off"},
      {.name = "commitlog_ext_spin_wait",
       .type = duration([](auto& o) -> auto& { return o.spin_wait; }, kAnyDuration),
       .doc = "The longest a waiting thread spins before it sleeps.",
       .check = [](const Options& o) -> std::string {
         return o.spin_wait >= Duration::zero() && o.spin_wait <= kMaxSpinWait
                    ? "" : "must be between 0ms (never spin) and 10ms";
       },
       .zero_means = "never"},
      {.name = "commitlog_ext_file_mode",
       .type = permissions([](auto& o) -> auto& { return o.file_mode; }),
       .doc = "Permission bits of the segment files and CDC's idx files, less the umask; 0640 lets a backup group read them.",
       .check = [](const Options& o) -> std::string {
         return (o.file_mode & 0600) == 0600 ? "" : "must give the owner read and write (0600)";
       }},
      {.name = "commitlog_ext_directory_mode",
       .type = permissions([](auto& o) -> auto& { return o.directory_mode; }),
       .doc = "Permission bits of the directories the log creates (cdc_raw too), less the umask; 0750 lets a backup group in.",
       .check = [](const Options& o) -> std::string {
         return (o.directory_mode & 0700) == 0700 ? "" : "must give the owner read, write and search (0700)";
       }},

      {.name = "cdc_enabled",
       .type = boolean([](auto& o) -> auto& { return o.cdc.enabled; }),
       .doc = "Change data capture: segments holding CDC tables' mutations are hard-linked into "
              "cdc_raw_directory, with a _cdc.idx file saying how far each is durable."},
      {.name = "cdc_raw_directory",
       .type = text([](auto& o) -> auto& { return o.cdc.raw_directory; }, "a directory path"),
       .doc = "Where CDC links its segments; the consumer deletes what it has read.",
       .check = cdc_directory_rule,
       .zero_means = "cdc_raw beside commitlog_directory"},
      {.name = "cdc_total_space",
       .old_name = "cdc_total_space_in_mb",
       .type = size([](auto& o) -> auto& { return o.cdc.total_space; }, kCassandraMiB),
       .doc = "The most cdc_raw_directory may hold; cdc_block_writes says what happens over it.",
       .zero_means = "min(4096MiB, 1/8 of its volume)"},
      {.name = "cdc_free_space_check_interval",
       .old_name = "cdc_free_space_check_interval_ms",
       .type = duration([](auto& o) -> auto& { return o.cdc.free_space_check_interval; }, kCassandraMs),
       .doc = "How often the size of cdc_raw_directory is measured again.",
       .check = [](const Options& o) -> std::string {
         return o.cdc.free_space_check_interval > Duration::zero() ? "" : "must be greater than 0";
       }},
      {.name = "cdc_block_writes",
       .type = boolean([](auto& o) -> auto& { return o.cdc.block_writes; }),
       .doc = "Over cdc_total_space: true refuses appends of CDC tables; false deletes the oldest files in "
              "cdc_raw_directory."},
      {.name = "commitlog_ext_cdc_tables",
       .type = table_list([](auto& o) -> auto& { return o.cdc.tables; }),
       .doc = "The tables whose mutations CDC captures.",
       .zero_means = "every table"},

      {.name = "cdc_on_repair_enabled", .doc = "Streamed data is captured like any other here.", .harmless = &kAnyValue},
      {.name = "commitlog_sync_batch_window_in_ms",
       .doc = "Cassandra 3's batch window; batch here syncs as soon as an append asks, as Cassandra 4's does."},
      {.name = "commitlog_periodic_queue_size", .doc = "Cassandra 2's queue of periodic appends."},
  };
}

}  // namespace

// Optimal string alignment distance (Levenshtein plus adjacent swaps).
size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1])});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

std::span<const KeySpec> keys() {
  static const std::vector<KeySpec> table = make_keys();
  return table;
}

const KeySpec* find_key(std::string_view key) {
  for (const KeySpec& k : keys()) {
    if (key == k.name || (!k.old_name.empty() && key == k.old_name)) return &k;
  }
  return nullptr;
}

std::string_view suggest_key(std::string_view key) {
  constexpr size_t kMaxDistance = 2;
  // A distance is at least the difference in length.
  std::string_view best;
  size_t best_distance = kMaxDistance + 1;
  for (const KeySpec& k : keys()) {
    for (std::string_view name : {k.name, k.old_name}) {
      if (name.empty()) continue;
      if (name.size() == key.size() + 10 && name.starts_with("commitlog_") && name.ends_with(key)) return name;
      const size_t gap = name.size() > key.size() ? name.size() - key.size() : key.size() - name.size();
      if (gap >= best_distance) continue;
      const size_t distance = edit_distance(key, name);
      if (distance < best_distance) {
        best = name;
        best_distance = distance;
      }
    }
  }
  return best;
}

bool has_commit_log_prefix(std::string_view key) {
  for (std::string_view prefix : {"commitlog_", "cdc_", "periodic_commitlog"}) {
    if (key.starts_with(prefix)) return true;
  }
  return false;
}

}  // namespace commitlog::config
