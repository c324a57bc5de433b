// SPDX-License-Identifier: Apache-2.0
#include "commitlog/config/config_types.h"

#include <charconv>
#include <optional>

#include <fmt/core.h>

#include "commitlog/config/yaml_walk.h"

namespace commitlog::config {
namespace {

namespace cv = config_values;

const char* type_name(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map: return "a map";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Scalar: return "a scalar";
    case YAML::NodeType::Null: return "empty";
    case YAML::NodeType::Undefined: break;
  }
  return "undefined";
}

// s's value when it is a scalar; else reports that `expected` was expected.
std::optional<std::string> scalar(const Setting& s, std::string_view expected, Problems& problems) {
  if (s.value.IsScalar()) return s.value.Scalar();
  problems.error(s, fmt::format("is {}, expected {}", type_name(s.value), expected));
  return std::nullopt;
}

// Reports a parse failure (the status' message ends the sentence) or yields the value.
template <typename T>
std::optional<T> parsed(const Setting& s, Result<T> result, Problems& problems) {
  if (result.ok()) return std::move(result).value();
  problems.error(s, result.status().message());
  return std::nullopt;
}

std::string unit_name(Duration unit) { return cv::format_duration(unit).substr(1); }  // "1ms" -> "ms"
std::string unit_name(uint64_t unit) { return cv::format_size(unit).substr(1); }

std::string list_text(const std::vector<std::pair<std::string, int>>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    out += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i].first;
  }
  return out;
}

constexpr std::string_view kLz4Names[] = {"LZ4Compressor", "LZ4", "org.apache.cassandra.io.compress.LZ4Compressor"};

// Compressor parameters: none is supported, so each one is a warning. Cassandra
// writes them as a list of maps (`parameters: [{k: v}]`, or `[null]`), or a map.
void warn_parameters(const YAML::Node& params, int line, Problems& problems) {
  if (params.IsNull()) return;
  if (params.IsMap()) {
    for (auto p = params.begin(); p != params.end(); ++p) {
      problems.warn(line_of(p->first),
                    fmt::format("commitlog_compression.parameters.{} is not supported and is ignored", show_written(p->first)));
    }
    return;
  }
  if (params.IsSequence()) {
    bool all_maps = true;
    for (const YAML::Node& item : params) all_maps = all_maps && (item.IsNull() || item.IsMap());
    if (all_maps) {
      for (const YAML::Node& item : params) warn_parameters(item, line, problems);
      return;
    }
  }
  problems.error("commitlog_compression.parameters", line, params,
                 fmt::format("is {}, expected a map of parameters", type_name(params)));
}

// {class_name: LZ4Compressor, parameters: {...}}, or cassandra.yaml's list of one such map.
std::optional<Compression> read_compression(const Setting& s, Problems& problems) {
  const YAML::Node spec = s.value.IsSequence() && s.value.size() == 1 ? s.value[0] : s.value;
  if (!spec.IsMap()) {
    problems.error(s, fmt::format("is {}, expected a map such as {{class_name: LZ4Compressor}}", type_name(s.value)));
    return std::nullopt;
  }
  std::optional<YAML::Node> class_name;
  int class_line = s.line;
  for (auto it = spec.begin(); it != spec.end(); ++it) {
    const std::string field = show_written(it->first);
    const int line = line_of(it->first);
    if (field == "class_name") {
      class_name.emplace(it->second);
      class_line = line;
    } else if (field == "parameters") {
      warn_parameters(it->second, line, problems);
    } else {
      problems.error(s, fmt::format("has an unknown field '{}' on line {} (expected class_name and parameters)",
                                    field, line));
      return std::nullopt;
    }
  }
  if (!class_name || class_name->IsNull()) {
    problems.error(s, "has no class_name (expected e.g. {class_name: LZ4Compressor})");
    return std::nullopt;
  }
  if (!class_name->IsScalar()) {
    problems.error("commitlog_compression.class_name", class_line, *class_name,
                   fmt::format("is {}, expected a compressor class name", type_name(*class_name)));
    return std::nullopt;
  }
  for (std::string_view name : kLz4Names) {
    if (class_name->Scalar() == name) return Compression::kLz4;
  }
  problems.error("commitlog_compression.class_name", class_line, *class_name,
                 "is not a supported compressor (supported: LZ4Compressor)", ErrorCode::kNotSupported);
  return std::nullopt;
}

constexpr size_t kShownNodes = 500;

void set_flow_style(YAML::Node node) {
  if (!node.IsMap() && !node.IsSequence()) return;
  node.SetStyle(YAML::EmitterStyle::Flow);
  for (auto it = node.begin(); it != node.end(); ++it) set_flow_style(node.IsMap() ? it->second : YAML::Node(*it));
}

}  // namespace

int line_of(const YAML::Node& node) {
  const YAML::Mark mark = node.Mark();
  return mark.line >= 0 ? mark.line + 1 : 0;
}

std::string show(const YAML::Node& node) {
  if (node.IsScalar()) return node.Scalar();
  if (node.IsNull()) return "";
  return to_yaml(node);
}

// A message needs no more than a few hundred nodes of what the file wrote.
std::string show_written(const YAML::Node& node) {
  if (has_more_nodes_than(node, kShownNodes)) return "(a value of more than " + std::to_string(kShownNodes) + " items)";
  return show(node);
}

std::string to_yaml(const YAML::Node& node) {
  YAML::Node copy = YAML::Clone(node);
  set_flow_style(copy);
  YAML::Emitter out;
  out << copy;
  return out.c_str();
}

ValueType text(Access<std::string> field, std::string what) {
  return {.read =
              [field, what](const Setting& s, Options& o, Problems& problems) {
                std::optional<std::string> value = scalar(s, what, problems);
                if (!value) return;
                if (value->empty()) return problems.error(s, fmt::format("is empty, expected {}", what));
                field.set(o, std::move(*value));
              },
          .print = [field](const Options& o) { return field.get(o).empty() ? YAML::Node() : YAML::Node(field.get(o)); },
          .is_zero = [field](const Options& o) { return field.get(o).empty(); },
          .syntax = what,
          .old_syntax = {}};
}

ValueType duration(Access<Duration> field, DurationRule rule) {
  const cv::DurationLimits limits{rule.min_unit, rule.max_count};
  std::string min_unit = unit_name(rule.min_unit);
  return {.read =
              [field, rule, limits](const Setting& s, Options& o, Problems& problems) {
                std::optional<std::string> value = scalar(s, "a duration (e.g. 10000ms)", problems);
                if (!value) return;
                std::optional<Duration> d =
                    s.old_name ? parsed(s, cv::parse_old_duration(*value, rule.old_unit, unit_name(rule.old_unit),
                                                                  rule.old_fraction), problems)
                               : parsed(s, cv::parse_duration(*value, limits), problems);
                if (d) field.set(o, *d);
              },
          .print = [field](const Options& o) { return YAML::Node(cv::format_duration(field.get(o))); },
          .is_zero = [field](const Options& o) { return field.get(o) == Duration::zero(); },
          .syntax = rule.min_unit == Duration(1) ? "a duration (e.g. 10ms, 250us)"
                                                  : fmt::format("a duration, {} or coarser (e.g. 10000ms)", min_unit),
          .old_syntax = rule.old_unit == Duration(0)
                            ? std::string()
                            : fmt::format("a bare {} of {}", rule.old_fraction ? "number" : "count",
                                          unit_name(rule.old_unit))};
}

ValueType size(Access<uint64_t> field, SizeRule rule) {
  const cv::SizeLimits limits{rule.min_unit, rule.max_count};
  std::string min_unit = unit_name(rule.min_unit);
  return {.read =
              [field, rule, limits](const Setting& s, Options& o, Problems& problems) {
                std::optional<std::string> value = scalar(s, "a size (e.g. 32MiB)", problems);
                if (!value) return;
                std::optional<uint64_t> bytes =
                    s.old_name ? parsed(s, cv::parse_old_size(*value, rule.old_unit, unit_name(rule.old_unit)), problems)
                               : parsed(s, cv::parse_size(*value, limits), problems);
                if (bytes) field.set(o, *bytes);
              },
          .print = [field](const Options& o) { return YAML::Node(cv::format_size(field.get(o))); },
          .is_zero = [field](const Options& o) { return field.get(o) == 0; },
          .syntax = rule.min_unit == 1 ? "a size (e.g. 4KiB, 1MiB)"
                                       : fmt::format("a size, {0} or coarser (e.g. {1}{0})", min_unit,
                                                     rule.min_unit == cv::kKiB ? 64 : 32),
          .old_syntax = rule.old_unit == 0 ? std::string() : fmt::format("a bare count of {}", unit_name(rule.old_unit))};
}

ValueType count(Access<uint64_t> field) {
  return {.read =
              [field](const Setting& s, Options& o, Problems& problems) {
                std::optional<std::string> value = scalar(s, "a whole number", problems);
                if (!value) return;
                uint64_t n = 0;
                auto [end, ec] = std::from_chars(value->data(), value->data() + value->size(), n);
                if (value->empty() || ec != std::errc() || end != value->data() + value->size()) {
                  return problems.error(s, "is not a whole number");
                }
                field.set(o, n);
              },
          .print = [field](const Options& o) { return YAML::Node(std::to_string(field.get(o))); },
          .is_zero = [field](const Options& o) { return field.get(o) == 0; },
          .syntax = "a whole number",
          .old_syntax = {}};
}

ValueType boolean(Access<bool> field) {
  return {.read =
              [field](const Setting& s, Options& o, Problems& problems) {
                std::optional<std::string> value = scalar(s, "true or false", problems);
                if (!value) return;
                std::optional<bool> b = cv::parse_bool(*value);
                if (!b) return problems.error(s, "is not true or false");
                field.set(o, *b);
              },
          .print = [field](const Options& o) { return YAML::Node(field.get(o) ? "true" : "false"); },
          .is_zero = [field](const Options& o) { return !field.get(o); },
          .syntax = "true or false",
          .old_syntax = {}};
}

ValueType permissions(Access<uint32_t> field) {
  return {.read =
              [field](const Setting& s, Options& o, Problems& problems) {
                std::optional<std::string> value = scalar(s, "permission bits in octal", problems);
                if (!value) return;
                uint32_t bits = 0;
                auto [end, ec] = std::from_chars(value->data(), value->data() + value->size(), bits, 8);
                if (value->empty() || ec != std::errc() || end != value->data() + value->size() || bits > 0777) {
                  return problems.error(s, "is not permission bits in octal (0000 to 0777, e.g. 0640)");
                }
                field.set(o, bits);
              },
          .print = [field](const Options& o) { return YAML::Node(fmt::format("{:04o}", field.get(o))); },
          .is_zero = [field](const Options& o) { return field.get(o) == 0; },
          .syntax = "permission bits in octal (e.g. 0640)",
          .old_syntax = {}};
}

ValueType table_list(Access<std::vector<uint32_t>> field) {
  constexpr std::string_view kExpected = "a list of table ids (e.g. [1, 7])";
  return {.read =
              [field, kExpected](const Setting& s, Options& o, Problems& problems) {
                if (!s.value.IsSequence()) {
                  return problems.error(s, fmt::format("is {}, expected {}", type_name(s.value), kExpected));
                }
                std::vector<uint32_t> tables;
                for (const YAML::Node& item : s.value) {
                  uint32_t id = 0;
                  const std::string text = item.IsScalar() ? item.Scalar() : std::string();
                  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
                  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) {
                    return problems.error(s, fmt::format("holds '{}', not a table id (0 to 4294967295)", show_written(item)));
                  }
                  tables.push_back(id);
                }
                field.set(o, std::move(tables));
              },
          .print =
              [field](const Options& o) {
                const std::vector<uint32_t> tables = field.get(o);
                if (tables.empty()) return YAML::Node();
                YAML::Node list(YAML::NodeType::Sequence);
                for (uint32_t id : tables) list.push_back(std::to_string(id));
                return list;
              },
          .is_zero = [field](const Options& o) { return field.get(o).empty(); },
          .syntax = std::string(kExpected),
          .old_syntax = {}};
}

ValueType choice(Access<int> field, std::string noun, std::vector<std::pair<std::string, int>> names) {
  const std::string expected = list_text(names);
  return {.read =
              [field, noun, names, expected](const Setting& s, Options& o, Problems& problems) {
                std::optional<std::string> value = scalar(s, expected, problems);
                if (!value) return;
                for (const auto& [name, v] : names) {
                  if (*value == name) return field.set(o, v);
                }
                problems.error(s, fmt::format("is not {} (expected {})", noun, expected));
              },
          .print =
              [field, names](const Options& o) {
                for (const auto& [name, v] : names) {
                  if (v == field.get(o)) return YAML::Node(name);
                }
                return YAML::Node();
              },
          .is_zero = [](const Options&) { return false; },
          .syntax = fmt::format("{}: {}", noun, expected),
          .old_syntax = {}};
}

ValueType compression(Access<Compression> field) {
  return {.read =
              [field](const Setting& s, Options& o, Problems& problems) {
                if (std::optional<Compression> c = read_compression(s, problems)) field.set(o, *c);
              },
          .print =
              [field](const Options& o) {
                YAML::Node spec;
                if (field.get(o) == Compression::kLz4) spec["class_name"] = "LZ4Compressor";
                return spec;
              },
          .is_zero = [field](const Options& o) { return field.get(o) == Compression::kNone; },
          .syntax = "a map {class_name: LZ4Compressor} (or cassandra.yaml's list of one such map)",
          .old_syntax = {}};
}

}  // namespace commitlog::config
