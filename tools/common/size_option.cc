// SPDX-License-Identifier: Apache-2.0
#include "tools/common/size_option.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>

#include "commitlog/config/config_values.h"

namespace commitlog::tools {

Result<uint64_t> parse_size_argument(std::string_view text) {
  const bool bare = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c));
  });
  if (bare) {
    uint64_t bytes = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), bytes);
    if (ec == std::errc()) return bytes;
  } else if (auto bytes = config_values::parse_size(text, {1, std::numeric_limits<int64_t>::max()}); bytes.ok()) {
    return bytes;
  }
  return Status::invalid_argument("'" + std::string(text) + "' is not a size (e.g. 100, 4KiB, 32MiB)");
}

CLI::Option* add_size_option(CLI::App* cmd, const std::string& name, uint64_t* bytes, const std::string& description,
                             uint64_t min, uint64_t max) {
  namespace cv = config_values;
  const bool bounded = min > 0 || max < UINT64_MAX;
  const std::string range = cv::format_size(min) + " to " + cv::format_size(max);
  CLI::Validator size_syntax(
      [min, max, range](std::string& value) -> std::string {
        Result<uint64_t> parsed = parse_size_argument(value);
        if (!parsed.ok()) return parsed.status().message();
        if (*parsed < min || *parsed > max) return "'" + value + "' is not from " + range;
        value = std::to_string(*parsed);
        return {};
      },
      bounded ? range : "");
  CLI::Option* option = cmd->add_option(name, *bytes, description)->transform(size_syntax)->type_name("SIZE");
  if (*bytes != 0) option->default_str(cv::format_size(*bytes));
  return option;
}

}  // namespace commitlog::tools
