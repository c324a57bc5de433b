// SPDX-License-Identifier: Apache-2.0
// The kinds of value a configuration key takes (a duration, a size, a name
// from a list, ...): how each is read from yaml into Options and printed back.
// The key table (config_keys.h) gives every key one of these.
//
// A value type reads what the file says into the Options field its accessor
// names, e.g.
//   duration([](auto& o) -> auto& { return o.policy.sync_period; }, kCassandraMs)
// and prints that field as yaml that it reads back to the same value.
#pragma once

#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "commitlog/config/config_values.h"
#include "commitlog/options.h"

namespace commitlog::config {

// The line of `node` in its file, from 1; 0 where yaml-cpp knows none.
int line_of(const YAML::Node& node);

// A top-level `key: value` of a file, as written. `value` is never null.
struct Setting {
  std::string key;  // the entry's new or old name
  YAML::Node value;
  int line = 0;
  bool old_name = false;
};

// Where reading reports what is wrong; the loader adds the file name.
class Problems {
 public:
  virtual ~Problems() = default;
  // "<key>: '<value>' <what>" at `line`.
  virtual void error(std::string_view key, int line, const YAML::Node& value, std::string_view what,
                     ErrorCode code = ErrorCode::kInvalidArgument) = 0;
  void error(const Setting& s, std::string_view what) { error(s.key, s.line, s.value, what); }
  virtual void warn(int line, std::string text) = 0;
};

struct ValueType {
  // Reads `s` into `o`; on a problem reports it and leaves `o` alone.
  std::function<void(const Setting& s, Options& o, Problems& problems)> read;
  // The value in `o` as yaml that `read` takes under the new name; null when unset.
  std::function<YAML::Node(const Options& o)> print;
  // Whether `o` holds the value that KeySpec::zero_means describes (0, empty).
  std::function<bool(const Options& o)> is_zero;
  std::string syntax;      // "a duration, ms or coarser (e.g. 10000ms)"
  std::string old_syntax;  // under the old name: "a bare count of ms"; empty without one
};

// Reading and writing one Options field of type T.
template <typename T>
struct Access {
  std::function<T(const Options&)> get;
  std::function<void(Options&, T)> set;
};

// Access through `field`, a generic lambda returning a reference to the
// field: [](auto& o) -> auto& { return o.directory; }.
template <typename Field>
auto access(Field field) {
  using T = std::remove_cvref_t<std::invoke_result_t<Field, Options&>>;
  return Access<T>{[field](const Options& o) -> T { return field(o); },
                   [field](Options& o, T value) { field(o) = std::move(value); }};
}

// Units and limits. Cassandra's keys take ms (or MiB, KiB) and coarser, their
// value counted in that unit fits an int32, and the old name is a bare count
// of the unit; the keys of our own take any unit.
struct DurationRule {
  Duration min_unit;
  int64_t max_count;   // in min_unit
  Duration old_unit;   // what the old name's bare count counts
  bool old_fraction;   // the old name takes a decimal (Cassandra's group window)
};
inline constexpr DurationRule kCassandraMs{std::chrono::milliseconds(1), config_values::kInt32Max,
                                           std::chrono::milliseconds(1), false};
inline constexpr DurationRule kAnyDuration{Duration(1), std::numeric_limits<int64_t>::max(), Duration(0), false};
struct SizeRule {
  uint64_t min_unit;
  int64_t max_count;  // in min_unit
  uint64_t old_unit;
};
inline constexpr SizeRule kCassandraMiB{config_values::kMiB, config_values::kInt32Max, config_values::kMiB};
inline constexpr SizeRule kCassandraKiB{config_values::kKiB, config_values::kInt32Max, config_values::kKiB};
inline constexpr SizeRule kAnySize{1, std::numeric_limits<int64_t>::max(), 0};

// A non-empty string; `what` is "a directory path", "a sync policy name", ...
ValueType text(Access<std::string> field, std::string what);
ValueType duration(Access<Duration> field, DurationRule rule);
ValueType size(Access<uint64_t> field, SizeRule rule);
ValueType count(Access<uint64_t> field);
ValueType boolean(Access<bool> field);
// Permission bits in octal, as chmod takes them (e.g. 0640).
ValueType permissions(Access<uint32_t> field);
// A yaml list of table ids.
ValueType table_list(Access<std::vector<uint32_t>> field);
// One of `names`' first members; `noun` says what they are ("a commit failure policy").
ValueType choice(Access<int> field, std::string noun, std::vector<std::pair<std::string, int>> names);
// commitlog_compression: {class_name: LZ4Compressor, parameters: ...}.
ValueType compression(Access<Compression> field);
// transparent_data_encryption_options: {enabled, key_alias, key_provider}
// (config_encryption.cc); reads the key file it names.
ValueType encryption(Access<std::shared_ptr<const KeyProvider>> field);

template <typename Field>
ValueType text(Field field, std::string what) { return text(access(field), std::move(what)); }
template <typename Field>
ValueType duration(Field field, DurationRule rule) { return duration(access(field), rule); }
template <typename Field>
ValueType size(Field field, SizeRule rule) { return size(access(field), rule); }
template <typename Field>
ValueType count(Field field) { return count(access(field)); }
template <typename Field>
ValueType boolean(Field field) { return boolean(access(field)); }
template <typename Field>
ValueType permissions(Field field) { return permissions(access(field)); }
template <typename Field>
ValueType table_list(Field field) { return table_list(access(field)); }
template <typename Field>
ValueType compression(Field field) { return compression(access(field)); }
template <typename Field>
ValueType encryption(Field field) { return encryption(access(field)); }
template <typename Field>
using FieldType = std::remove_cvref_t<std::invoke_result_t<Field, Options&>>;
template <typename Field>
ValueType choice(Field field, std::string noun, std::vector<std::pair<std::string, FieldType<Field>>> names) {
  std::vector<std::pair<std::string, int>> as_int;
  for (auto& [name, value] : names) as_int.emplace_back(std::move(name), static_cast<int>(value));
  Access<int> int_field{[field](const Options& o) { return static_cast<int>(field(o)); },
                        [field](Options& o, int v) { field(o) = static_cast<FieldType<Field>>(v); }};
  return choice(std::move(int_field), std::move(noun), std::move(as_int));
}

// The value as text on one line: a scalar as it is, maps and lists in flow
// style; "" for null.
std::string show(const YAML::Node& node);
// show() of a value from a file, for messages: past 500 items (an alias
// bomb can stand for billions) it says so instead.
std::string show_written(const YAML::Node& node);
// The value as yaml on one line (a scalar quoted where yaml needs it).
std::string to_yaml(const YAML::Node& node);

}  // namespace commitlog::config
