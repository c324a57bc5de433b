// SPDX-License-Identifier: Apache-2.0
// Loading: which keys the file sets and on which line, each value read by its
// key's type (config_types.cc), the result checked by Options::validate(),
// and every problem reported against the line it is about. Every yaml-cpp
// exception stops in load_config_string().
#include "commitlog/config.h"

#include <algorithm>
#include <climits>
#include <map>
#include <set>
#include <string_view>
#include <utility>

#include <fmt/core.h>
#include <yaml-cpp/yaml.h>

#include "commitlog/config/config_keys.h"
#include "commitlog/config/yaml_walk.h"

namespace commitlog {
namespace {

using config::KeySpec;
using config::line_of;
using config::Setting;

// What a load found wrong, in the order found; reported in line order.
class Report final : public config::Problems {
 public:
  Report(std::string file, bool strict) : file_(std::move(file)), strict_(strict) {}

  void error(std::string_view key, int line, const YAML::Node& value, std::string_view what,
             ErrorCode code = ErrorCode::kInvalidArgument) override {
    add(line, fmt::format("{}: '{}' {}", key, config::show_written(value), what), code, false);
  }
  using Problems::error;
  void warn(int line, std::string text) override { add(line, std::move(text), ErrorCode::kInvalidArgument, true); }
  // A problem that quotes no value; line 0: the whole file.
  void error_at(int line, std::string text) { add(line, std::move(text), ErrorCode::kInvalidArgument, false); }

  // Errors so far; with strict, warnings count.
  size_t errors() const {
    return std::count_if(messages_.begin(), messages_.end(), [&](const Message& m) { return !m.warning || strict_; });
  }
  // Every error (and warning) in line order; ok when there is no error.
  Status failure() const;
  std::vector<std::string> warnings() const;

 private:
  struct Message {
    int line;
    std::string text;  // without the file and line
    ErrorCode code;
    bool warning;
  };
  void add(int line, std::string text, ErrorCode code, bool warning) {
    messages_.push_back({line, std::move(text), code, warning});
  }
  std::string where(int line) const { return line > 0 ? fmt::format("{}:{}", file_, line) : file_; }
  std::vector<Message> in_line_order() const;

  std::string file_;
  bool strict_;
  std::vector<Message> messages_;
};

// The keys one file sets, read into Options.
class Loader {
 public:
  explicit Loader(Report& report) : report_(report) {}

  // Takes the top-level keys of `root`, warning about unknown ones.
  void collect(const YAML::Node& root);
  // Reads every supported key the file sets; derives the defaults of the others.
  void read(Options& o);
  // Reports what Options::validate() finds, at the lines of the keys it names.
  void check(const Options& o);
  std::vector<ConfigValue> settings(const Options& o) const;

 private:
  // What the file sets for `k`, under either name; nullptr when unset.
  const Setting* setting(const KeySpec& k) const;

  Report& report_;
  std::map<std::string, Setting, std::less<>> written_;  // by the key as written
  std::set<std::string_view> unreadable_;                  // keys whose value failed to read
};

void Loader::collect(const YAML::Node& root) {
  if (root.IsNull()) return;  // an empty file: every default
  if (!root.IsMap()) {
    const char* kind = root.IsSequence() ? "a list" : "a scalar";
    return report_.error_at(line_of(root), fmt::format("the top level is {}, expected a map of settings", kind));
  }
  for (auto it = root.begin(); it != root.end(); ++it) {
    if (!it->first.IsScalar() || it->second.IsNull()) continue;  // not ours, or unset
    const std::string key = it->first.Scalar();
    const int line = line_of(it->first);
    const KeySpec* k = config::find_key(key);
    if (k == nullptr) {
      if (std::string_view near = config::suggest_key(key); !near.empty()) {
        report_.warn(line, fmt::format("{} is not a known key and is ignored; did you mean {}?", key, near));
      } else if (config::has_commit_log_prefix(key)) {
        report_.warn(line, fmt::format("{} is not supported and is ignored", key));
      }
    } else if (!k->supported()) {
      if (k->harmless == nullptr || !k->harmless->accepts(config::show_written(it->second))) {
        // The key's doc says what it was for and why it has no place here.
        std::string_view why = k->doc;
        if (why.ends_with('.')) why.remove_suffix(1);
        report_.warn(line, fmt::format("{} is not supported and is ignored: {}", key, why));
      }
    } else if (auto [first, inserted] = written_.emplace(key, Setting{key, it->second, line, key == k->old_name});
               !inserted) {
      report_.error(key, line, it->second,
            fmt::format("is a second setting of {} (the first is on line {})", key, first->second.line));
    } else if (auto repeated = config::find_repeated_key(it->second)) {
      // Read as written, one of the two would be taken without a word.
      report_.error(key, repeated->second_line, it->second,
                    fmt::format("sets {} twice (lines {} and {})", repeated->path, repeated->first_line,
                                repeated->second_line));
      unreadable_.insert(k->name);
      written_.erase(first);
    }
  }
}

const Setting* Loader::setting(const KeySpec& k) const {
  auto fresh = written_.find(k.name);
  if (fresh != written_.end()) return &fresh->second;
  auto old = k.old_name.empty() ? written_.end() : written_.find(k.old_name);
  return old != written_.end() ? &old->second : nullptr;
}

void Loader::read(Options& o) {
  for (const KeySpec& k : config::keys()) {
    if (!k.supported()) continue;
    const Setting* s = setting(k);
    if (s == nullptr) continue;
    const size_t before = report_.errors();
    if (auto old = written_.find(k.old_name); !s->old_name && old != written_.end()) {
      report_.error(*s, fmt::format("is also set under the old name {}: '{}' on line {}; keep only {}", k.old_name,
                            config::show_written(old->second.value), old->second.line, k.name));
    } else {
      k.type->read(*s, o, report_);
    }
    if (report_.errors() > before) unreadable_.insert(k.name);
  }
  for (const KeySpec& k : config::keys()) {
    if (k.derive != nullptr && setting(k) == nullptr) k.derive(o);
  }
}

void Loader::check(const Options& o) {
  for (const OptionError& e : o.validate()) {
    // A value that did not read is reported already; the default left in its place proves nothing.
    if (unreadable_.contains(e.key) || unreadable_.contains(e.depends_on)) continue;
    const KeySpec* k = config::find_key(e.key);
    const KeySpec* cause = e.depends_on.empty() ? nullptr : config::find_key(e.depends_on);
    if (const Setting* s = setting(*k)) {
      report_.error(*s, e.message);
    } else {
      const Setting* c = cause == nullptr ? nullptr : setting(*cause);
      report_.error_at(c == nullptr ? 0 : c->line, e.key + " " + e.message);
    }
  }
}

std::vector<ConfigValue> Loader::settings(const Options& o) const {
  std::vector<ConfigValue> out;
  for (const KeySpec& k : config::keys()) {
    if (!k.supported()) continue;
    const Setting* s = setting(k);
    std::string note(!k.zero_means.empty() && k.type->is_zero(o) ? k.zero_means
                     : s == nullptr                                 ? k.derived_default
                                                                    : std::string_view());
    if (k.in_effect != nullptr) note = k.in_effect(o);
    out.push_back({std::string(k.name), config::show(k.type->print(o)), std::move(note),
                   s != nullptr ? ConfigSource::kFile : ConfigSource::kDefault, s != nullptr ? s->line : 0});
  }
  return out;
}

std::vector<Report::Message> Report::in_line_order() const {
  std::vector<Message> sorted = messages_;
  // Problems about the whole file (line 0) come last.
  std::stable_sort(sorted.begin(), sorted.end(), [](const Message& a, const Message& b) {
    return (a.line == 0 ? INT_MAX : a.line) < (b.line == 0 ? INT_MAX : b.line);
  });
  return sorted;
}

Status Report::failure() const {
  if (errors() == 0) return {};
  std::string text;
  ErrorCode code = ErrorCode::kOk;
  for (const Message& m : in_line_order()) {
    const bool is_error = !m.warning || strict_;
    if (is_error && code == ErrorCode::kOk) code = m.code;
    text += fmt::format("{}{}{}: {}", text.empty() ? "" : "\n", is_error ? "" : "warning: ", where(m.line), m.text);
  }
  return {code, std::move(text)};
}

std::vector<std::string> Report::warnings() const {
  std::vector<std::string> out;
  for (const Message& m : in_line_order()) out.push_back(fmt::format("{}: {}", where(m.line), m.text));
  return out;
}

Result<LoadedConfig> load_yaml(const YAML::Node& root, const std::string& file, bool strict) {
  Report report(file, strict);
  Loader loader(report);
  LoadedConfig out;
  loader.collect(root);
  loader.read(out.options);
  loader.check(out.options);
  CL_RETURN_IF_ERROR(report.failure());
  out.settings = loader.settings(out.options);
  out.warnings = report.warnings();
  return out;
}

}  // namespace

Result<LoadedConfig> load_config_file(const std::string& path, const LoadOptions& load) {
  FileSystem& fs = *load.file_system;
  if (fs.is_directory(path)) return Status::invalid_argument(path + ": is a directory, expected a yaml file");
  if (!fs.exists(path)) return Status::not_found(path + ": no such file");
  auto bytes = read_whole_file(fs, path);
  if (!bytes.ok()) return bytes.status();
  return load_config_string(std::string(reinterpret_cast<const char*>(bytes->data()), bytes->size()), path, load);
}

Result<LoadedConfig> load_config_string(const std::string& yaml, const std::string& name_for_errors,
                                        const LoadOptions& load) {
  try {
    return load_yaml(YAML::Load(yaml), name_for_errors, load.strict);
  } catch (const YAML::ParserException& e) {
    return Status::invalid_argument(
        fmt::format("{}:{}: yaml syntax error: {}", name_for_errors, e.mark.line + 1, e.msg));
  } catch (const std::exception& e) {
    return Status::invalid_argument(fmt::format("{}: cannot load the configuration: {}", name_for_errors, e.what()));
  } catch (...) {
    return Status::invalid_argument(fmt::format("{}: cannot load the configuration", name_for_errors));
  }
}

}  // namespace commitlog
