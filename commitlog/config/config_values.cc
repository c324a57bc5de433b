// SPDX-License-Identifier: Apache-2.0
#include "commitlog/config/config_values.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <optional>
#include <span>

#include <fmt/core.h>

namespace commitlog::config_values {
namespace {

struct Unit {
  std::string_view symbol;
  uint64_t scale;  // nanoseconds or bytes
};

constexpr Unit kDurationUnits[] = {
    {"d", 86'400'000'000'000}, {"h", 3'600'000'000'000}, {"m", 60'000'000'000},
    {"s", 1'000'000'000},      {"ms", 1'000'000},        {"us", 1'000},
    {"\xc2\xb5s", 1'000},  // µs, U+00B5 in UTF-8
    {"ns", 1},
};
constexpr Unit kSizeUnits[] = {{"GiB", 1ull << 30}, {"MiB", kMiB}, {"KiB", kKiB}, {"B", 1}};

// "<digits><rest>": the digits' value (nullopt when it overflows uint64) and the rest.
struct Leading {
  std::optional<uint64_t> value;
  std::string_view rest;
};

std::optional<Leading> leading_digits(std::string_view text) {
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (end == text.data()) return std::nullopt;  // no digit (from_chars takes no sign for unsigned)
  Leading out;
  if (ec != std::errc::result_out_of_range) out.value = value;
  // On overflow `end` still points past the digits.
  out.rest = text.substr(static_cast<size_t>(end - text.data()));
  return out;
}

bool looks_negative(std::string_view text) {
  return text.size() > 1 && text[0] == '-' && (std::isdigit(static_cast<unsigned char>(text[1])) || text[1] == '.');
}

Status invalid(std::string message) { return Status::invalid_argument(std::move(message)); }

std::string_view symbol_of(std::span<const Unit> units, uint64_t scale) {
  for (const Unit& u : units) {
    if (u.scale == scale) return u.symbol;
  }
  return "?";
}

// <count><unit> with the unit from `units`; the result in `units`' base (ns or bytes).
Result<uint64_t> parse_with_units(std::string_view text, std::span<const Unit> units,
                                  uint64_t min_unit, int64_t max_count, std::string_view what,
                                  std::string_view example) {
  if (looks_negative(text)) return invalid("is negative");
  std::optional<Leading> number = leading_digits(text);
  const Unit* unit = nullptr;
  if (number) {
    for (const Unit& u : units) {
      if (u.symbol == number->rest) unit = &u;
    }
  }
  if (unit == nullptr) return invalid(fmt::format("is not a {} (expected e.g. {})", what, example));
  std::string_view min_symbol = symbol_of(units, min_unit);
  if (unit->scale < min_unit) {
    return invalid(fmt::format("is in {}; the smallest unit this key accepts is {}", unit->symbol, min_symbol));
  }
  uint64_t factor = unit->scale / min_unit;
  uint64_t max = static_cast<uint64_t>(max_count);
  if (!number->value || *number->value > max / factor) {
    return invalid(fmt::format("is too large (at most {}{})", max_count, min_symbol));
  }
  return *number->value * factor * min_unit;
}

Duration from_nanos(uint64_t ns) {
  return std::chrono::duration_cast<Duration>(std::chrono::nanoseconds(static_cast<int64_t>(ns)));
}

// A bare count for an old-style key, at most int32 max.
Result<double> parse_old_count(std::string_view text, std::string_view unit_name, bool allow_fraction) {
  if (looks_negative(text)) return invalid("is negative");
  std::string_view expected = allow_fraction ? "a number" : "a whole number";
  Status bad = invalid(fmt::format("is not {} (this old-style key takes a bare count of {})", expected, unit_name));
  double value = 0;
  if (allow_fraction) {
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    bool digit_first = !text.empty() && (std::isdigit(static_cast<unsigned char>(text[0])) || text[0] == '.');
    if (!digit_first || end != text.data() + text.size() || !std::isfinite(value)) return bad;
    if (ec == std::errc::result_out_of_range) value = HUGE_VAL;
  } else {
    std::optional<Leading> number = leading_digits(text);
    if (!number || !number->rest.empty()) return bad;
    value = number->value ? static_cast<double>(*number->value) : HUGE_VAL;
  }
  if (value > static_cast<double>(kInt32Max)) return invalid(fmt::format("is too large (at most {})", kInt32Max));
  return value;
}

}  // namespace

Result<Duration> parse_duration(std::string_view text, DurationLimits limits) {
  auto min_ns = static_cast<uint64_t>(std::chrono::nanoseconds(limits.min_unit).count());
  Result<uint64_t> ns = parse_with_units(text, kDurationUnits, min_ns, limits.max_count, "duration", "10000ms");
  if (!ns.ok()) return ns.status();
  return from_nanos(*ns);
}

Result<uint64_t> parse_size(std::string_view text, SizeLimits limits) {
  return parse_with_units(text, kSizeUnits, limits.min_unit, limits.max_count, "size", "32MiB");
}

Result<Duration> parse_old_duration(std::string_view text, Duration unit, std::string_view unit_name,
                                    bool allow_fraction) {
  Result<double> count = parse_old_count(text, unit_name, allow_fraction);
  if (!count.ok()) return count.status();
  auto unit_ns = static_cast<double>(std::chrono::nanoseconds(unit).count());
  return from_nanos(static_cast<uint64_t>(std::llround(*count * unit_ns)));
}

Result<uint64_t> parse_old_size(std::string_view text, uint64_t unit, std::string_view unit_name) {
  Result<double> count = parse_old_count(text, unit_name, false);
  if (!count.ok()) return count.status();
  return static_cast<uint64_t>(*count) * unit;
}

std::optional<bool> parse_bool(std::string_view text) {
  constexpr std::string_view kTrue[] = {"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON"};
  constexpr std::string_view kFalse[] = {"false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF"};
  for (std::string_view t : kTrue) {
    if (text == t) return true;
  }
  for (std::string_view f : kFalse) {
    if (text == f) return false;
  }
  return std::nullopt;
}

std::string format_duration(Duration d) {
  int64_t ns = std::chrono::nanoseconds(d).count();
  if (ns % 1'000'000 == 0) return fmt::format("{}ms", ns / 1'000'000);
  if (ns % 1'000 == 0) return fmt::format("{}us", ns / 1'000);
  return fmt::format("{}ns", ns);
}

std::string format_size(uint64_t bytes) {
  if (bytes % kMiB == 0) return fmt::format("{}MiB", bytes / kMiB);
  if (bytes % kKiB == 0) return fmt::format("{}KiB", bytes / kKiB);
  return fmt::format("{}B", bytes);
}

}  // namespace commitlog::config_values
