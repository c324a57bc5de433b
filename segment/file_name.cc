// SPDX-License-Identifier: Apache-2.0
#include "segment/file_name.h"

#include <charconv>

#include "segment/format.h"

namespace commitlog {
namespace {

// `text` as a whole as a decimal number below 2^64.
std::optional<uint64_t> decimal(std::string_view text) {
  uint64_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

}  // namespace

std::string segment_file_name(uint64_t id) {
  return std::string(format::kFilePrefix) + std::to_string(format::kFormatVersion) + "-" +
         std::to_string(id) + format::kFileSuffix;
}

Result<std::optional<uint64_t>> parse_segment_file_name(std::string_view name) {
  const std::string_view prefix = format::kFilePrefix, suffix = format::kFileSuffix;
  if (name.size() < prefix.size() + suffix.size() || !name.starts_with(prefix) ||
      !name.ends_with(suffix)) {
    return std::optional<uint64_t>();
  }
  const std::string_view rest = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  const size_t dash = rest.find('-');
  const auto version = decimal(rest.substr(0, dash));
  const auto id = dash == std::string_view::npos ? std::nullopt : decimal(rest.substr(dash + 1));
  if (!version || !id) {
    return Status::invalid_argument(std::string(name) + ": named like a segment (" +
                                    std::string(prefix) + "<version>-<id>" + std::string(suffix) +
                                    ") but its version or id is not a number below 2^64");
  }
  return std::optional<uint64_t>(*id);
}

std::string spare_file_name(uint64_t id) {
  return std::string(format::kFilePrefix) + std::to_string(id) + format::kSpareSuffix;
}

std::optional<uint64_t> parse_spare_file_name(std::string_view name) {
  const std::string_view prefix = format::kFilePrefix, suffix = format::kSpareSuffix;
  if (name.size() < prefix.size() + suffix.size() || !name.starts_with(prefix) || !name.ends_with(suffix)) {
    return std::nullopt;
  }
  return decimal(name.substr(prefix.size(), name.size() - prefix.size() - suffix.size()));
}

std::string base_name(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace commitlog
