// SPDX-License-Identifier: Apache-2.0
// Segment file names: CommitLog-<version>-<id>.log (format::kFilePrefix,
// kFileSuffix). Ids only increase, so names sort a log's segments in order.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "commitlog/status.h"

namespace commitlog {

std::string segment_file_name(uint64_t id);

// A file kept to be reused as a segment (commitlog/lifecycle/spare_segments.h):
// CommitLog-<id>.spare, `id` the one it had as a segment. Readers ignore it.
std::string spare_file_name(uint64_t id);
// The id in a spare's name; nullopt for any other name.
std::optional<uint64_t> parse_spare_file_name(std::string_view name);

// The last component of `path`: what follows its last '/', or all of it.
std::string base_name(const std::string& path);

// The id in a segment file's name. nullopt for a name that is not a
// segment's (other files in a log directory are ignored); an
// invalid-argument error naming `name` for one that has a segment's prefix
// and suffix but whose version or id is not a decimal number below 2^64.
Result<std::optional<uint64_t>> parse_segment_file_name(std::string_view name);

}  // namespace commitlog
