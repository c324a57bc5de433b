// SPDX-License-Identifier: Apache-2.0
#include "tools/lab/stress_options.h"

#include <algorithm>
#include <chrono>
#include <string_view>
#include <utility>

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include "commitlog/config.h"
#include "tools/common/key_file_option.h"

namespace commitlog::tools::stress {
namespace {

Duration milliseconds(double ms) {
  return std::chrono::duration_cast<Duration>(std::chrono::duration<double, std::milli>(ms));
}

}  // namespace

Result<Options> build_options(const StressArgs& args) {
  Options options;
  if (!args.config.empty()) {
    auto loaded = load_config_file(args.config);
    if (!loaded.ok()) return loaded.status();
    for (const std::string& warning : loaded->warnings) fmt::print(stderr, "warning: {}\n", warning);
    options = loaded->options;
  }
  options.directory = args.dir;
  if (!args.key_file.empty()) {
    auto keys = load_key_file_option(args.key_file);
    if (!keys.ok()) return keys.status();
    options.encryption = *keys;
  }
  if (args.policy_flag->count() > 0) options.sync_policy = args.policy;
  if (args.period_flag->count() > 0) {
    // As in conf/commitlog.yaml, the lag block follows the period.
    options.policy.sync_period = milliseconds(args.period_ms);
    options.policy.lag_block = milliseconds(args.period_ms * 1.5);
  }
  if (args.window_flag->count() > 0) options.policy.group_window = milliseconds(args.window_ms);
  if (args.segment_size_flag->count() > 0) options.segment_size = args.segment_size;
  if (kMaxPrefixSize + args.max_size - 1 > options.effective_max_mutation_size()) {
    return Status::invalid_argument(fmt::format(
        "--max-size {} makes payloads of up to {} bytes, over the max_mutation_size of {} bytes", args.max_size,
        kMaxPrefixSize + args.max_size - 1, options.effective_max_mutation_size()));
  }
  return options;
}

// check_options(), naming the flag that sets a value at fault as well as
// its yaml key: "commitlog_sync_group_window (0ms) must be greater than 0
// when commitlog_sync is group (--window MS, or the key in --config)".
Status check_driver_options(const Options& options) {
  const Status checked = check_options(options);
  if (checked.ok()) return checked;
  static constexpr std::pair<std::string_view, std::string_view> kFlags[] = {
      {"commitlog_sync", "--policy NAME"},
      {"commitlog_sync_period", "--period MS"},
      {"commitlog_sync_group_window", "--window MS"},
      {"commitlog_segment_size", "--segment-size SIZE"},
  };
  std::string message;
  std::string_view lines = checked.message();
  while (!lines.empty()) {
    const size_t end = std::min(lines.find('\n'), lines.size());
    std::string line(lines.substr(0, end));
    for (const auto& [key, flag] : kFlags) {
      if (line.starts_with(std::string(key) + " (")) {
        line += fmt::format(" ({}, or the key in --config)", flag);
      }
    }
    message += (message.empty() ? "" : "\n") + line;
    lines.remove_prefix(std::min(end + 1, lines.size()));
  }
  return Status::invalid_argument(message);
}

}  // namespace commitlog::tools::stress
