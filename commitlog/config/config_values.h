// SPDX-License-Identifier: Apache-2.0
// Cassandra's value syntax for durations and sizes (CASSANDRA-15234), with no
// yaml involved:
//   duration  ^(\d+)(d|h|m|s|ms|us|µs|ns)$   e.g. 10000ms, 2s
//   size      ^(\d+)(GiB|MiB|KiB|B)$          e.g. 32MiB, 64KiB
// plus the bare numbers of the old-style keys named *_in_ms, *_in_mb, *_in_kb,
// and yaml's booleans.
//
// On failure each parser returns kInvalidArgument whose message is the end of
// a sentence about the value, e.g. "is not a duration (expected e.g.
// 10000ms)"; the caller puts the file, line, key and value in front.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "commitlog/sync_policy.h"
#include "commitlog/status.h"

namespace commitlog::config_values {

inline constexpr uint64_t kKiB = 1ull << 10;
inline constexpr uint64_t kMiB = 1ull << 20;
inline constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();

// What one key accepts. Cassandra's keys have a smallest unit (ms for the
// commit-log durations, MiB or KiB for sizes) and their value counted in
// that unit must fit in an int32; our commitlog_ext_ keys take any unit.
struct DurationLimits {
  Duration min_unit = std::chrono::milliseconds(1);
  int64_t max_count = kInt32Max;  // in min_unit
};
struct SizeLimits {
  uint64_t min_unit = kMiB;
  int64_t max_count = kInt32Max;  // in min_unit
};

// "10000ms" -> 10 s. Errors: not a duration, negative, unit below
// limits.min_unit, more than limits.max_count min_units.
[[nodiscard]] Result<Duration> parse_duration(std::string_view text, DurationLimits limits);
// "32MiB" -> 32 << 20 bytes. Errors as for parse_duration.
[[nodiscard]] Result<uint64_t> parse_size(std::string_view text, SizeLimits limits);

// Old-style keys: a bare count of `unit` ("10000" for commitlog_sync_period_in_ms),
// at most int32 max. `allow_fraction` accepts a decimal ("0.5"), as Cassandra
// does for commitlog_sync_group_window_in_ms.
[[nodiscard]] Result<Duration> parse_old_duration(std::string_view text, Duration unit,
                                                  std::string_view unit_name, bool allow_fraction);
[[nodiscard]] Result<uint64_t> parse_old_size(std::string_view text, uint64_t unit,
                                              std::string_view unit_name);

// A yaml 1.1 boolean, as Cassandra reads it: true/false, yes/no, on/off, each
// in lower case, Capitalised or UPPER case; nullopt for anything else.
std::optional<bool> parse_bool(std::string_view text);

// New-style text in the largest of ms, us, ns (durations) or MiB, KiB, B
// (sizes) that holds the value exactly: "10000ms", "32MiB".
std::string format_duration(Duration d);
std::string format_size(uint64_t bytes);

}  // namespace commitlog::config_values
