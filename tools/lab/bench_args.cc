// SPDX-License-Identifier: Apache-2.0
#include "tools/lab/bench_args.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdlib>

#include "commitlog/config/config_values.h"
#include "tools/common/size_option.h"

namespace commitlog::tools {
namespace {

// "1.5MiB" -> {1.5, "mib"}; false if there is no leading number.
bool split_number(std::string_view text, double& number, std::string& unit) {
  size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.'))
    ++i;
  if (i == 0) return false;
  const std::string digits(text.substr(0, i));
  char* end = nullptr;
  number = std::strtod(digits.c_str(), &end);
  if (end != digits.c_str() + digits.size() || !std::isfinite(number)) return false;
  unit.clear();
  for (char c : text.substr(i)) {
    if (c != ' ') unit += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return true;
}

Result<int> parse_count(std::string_view text, const char* what) {
  double n = 0;
  std::string unit;
  if (!split_number(text, n, unit) || !unit.empty() || n < 1 || n > 1e6 || n != std::floor(n)) {
    return Status::invalid_argument(std::string(what) + " '" + std::string(text) +
                                    "' is not a whole number from 1 to 1000000");
  }
  return static_cast<int>(n);
}

}  // namespace

Result<uint64_t> parse_bench_size(std::string_view text) {
  auto bytes = parse_size_argument(text);
  if (bytes.ok() && *bytes >= 1 && *bytes <= 256 * config_values::kMiB) return bytes;
  return Status::invalid_argument("size '" + std::string(text) +
                                  "' is not a size from 1B to 256MiB (e.g. 100, 4KiB, 1MiB)");
}

Result<Duration> parse_bench_duration(std::string_view text) {
  double n = 0;
  std::string unit;
  if (split_number(text, n, unit)) {
    double seconds_per_unit = 0;
    if (unit.empty() || unit == "s") seconds_per_unit = 1;
    if (unit == "ms") seconds_per_unit = 1e-3;
    if (unit == "us" || unit == "µs") seconds_per_unit = 1e-6;
    if (unit == "ns") seconds_per_unit = 1e-9;
    if (unit == "m" || unit == "min") seconds_per_unit = 60;
    if (seconds_per_unit > 0 && n * seconds_per_unit <= 86400) {
      return std::chrono::duration_cast<Duration>(
          std::chrono::duration<double>(n * seconds_per_unit));
    }
  }
  return Status::invalid_argument("duration '" + std::string(text) +
                                  "' is not a duration (e.g. 2s, 0.5s, 500ms)");
}

Result<std::vector<ProducerShape>> parse_producers(const std::vector<std::string>& producers,
                                                   const std::vector<std::string>& fibers) {
  std::vector<int> fiber_counts;
  for (const std::string& f : fibers) {
    auto n = parse_count(f, "fiber count");
    if (!n.ok()) return n.status();
    fiber_counts.push_back(*n);
  }
  if (fiber_counts.empty()) fiber_counts.push_back(1);
  std::vector<ProducerShape> shapes;
  for (const std::string& p : producers) {
    const size_t x = p.find_first_of("xX");
    auto threads = parse_count(std::string_view(p).substr(0, x), "thread count");
    if (!threads.ok()) return threads.status();
    if (x != std::string::npos) {
      auto per_thread = parse_count(std::string_view(p).substr(x + 1), "fiber count");
      if (!per_thread.ok()) return per_thread.status();
      shapes.push_back({*threads, *per_thread});
      continue;
    }
    for (int f : fiber_counts) shapes.push_back({*threads, f});
  }
  if (shapes.empty()) return Status::invalid_argument("--producers: no producer counts");
  return shapes;
}

std::vector<EngineSpec> expand_axis(const std::vector<EngineSpec>& variants,
                                    const std::vector<std::string>& values,
                                    std::string EngineSpec::*field) {
  if (values.empty()) return variants;
  std::vector<EngineSpec> expanded;
  for (const EngineSpec& variant : variants) {
    if (variant.engine != "commitlog") {
      expanded.push_back(variant);
      continue;
    }
    for (const std::string& value : values) {
      expanded.push_back(variant);
      expanded.back().*field = value;
    }
  }
  return expanded;
}

Result<EngineSpec> parse_policy(std::string_view text, const PolicySettings& base) {
  EngineSpec spec;
  spec.engine = "commitlog";
  const size_t colon = text.find(':');
  spec.policy = std::string(text.substr(0, colon));
  const std::vector<std::string> names = PolicyRegistry::global().names();
  if (std::find(names.begin(), names.end(), spec.policy) == names.end()) {
    std::string known;
    for (const std::string& n : names) known += (known.empty() ? "" : ", ") + n;
    return Status::invalid_argument("unknown policy '" + spec.policy + "' (known: " + known + ")");
  }
  if (colon != std::string_view::npos) {
    auto window = parse_bench_duration(text.substr(colon + 1));
    if (!window.ok()) return window.status();
    if (*window <= Duration::zero()) {
      return Status::invalid_argument("policy '" + std::string(text) + "': the window must be > 0");
    }
    spec.window = *window;
    spec.window_text = std::string(text.substr(colon + 1));
  } else if (spec.policy == "group") {
    spec.window =
        base.group_window > Duration::zero() ? base.group_window : std::chrono::milliseconds(10);
    spec.window_text = config_values::format_duration(spec.window);
  }
  return spec;
}

}  // namespace commitlog::tools
