// SPDX-License-Identifier: Apache-2.0
// `commitlog config FILE [--format text|json|yaml] [--strict]`: loads a
// commitlog.yaml or a cassandra.yaml as the library would and prints every
// effective commit-log setting with where it came from.
//   text: aligned columns `key  value (note)  source`; warnings on stderr.
//   json: {"file", "settings": [{key, value, note, source, line}], "warnings": [...]}
//   yaml: a commitlog.yaml that loads back to the same settings.
// A file that does not load, or that names a file that cannot be read (the
// archiving properties): each problem on a line of stderr, exit 2. One the
// log would refuse to open with on this machine: printed, then exit 1.
// --strict: warnings are errors. `commitlog config --reference` prints
// docs/configuration.md.
#include <algorithm>
#include <memory>
#include <sstream>
#include <string>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "commitlog/lifecycle/access_mode.h"
#include "commitlog/lifecycle/archiver.h"
#include "commitlog/config.h"
#include "commitlog/config/config_render.h"
#include "tools/common/commands.h"

namespace commitlog::tools {
namespace {

constexpr int kExitRefused = 1;

struct ConfigArgs {
  std::string file;
  std::string format = "text";
  bool strict = false;
  bool reference = false;
};

std::string source_text(const ConfigValue& v, const std::string& file) {
  return v.source == ConfigSource::kFile ? fmt::format("{}:{}", file, v.line) : "default";
}

std::string value_text(const ConfigValue& v) {
  if (v.note.empty()) return v.value;
  return v.value.empty() ? "(" + v.note + ")" : v.value + " (" + v.note + ")";
}

void print_text(const LoadedConfig& config, const std::string& file) {
  for (const std::string& warning : config.warnings) fmt::print(stderr, "warning: {}\n", warning);
  size_t key_width = 0, value_width = 0;
  for (const ConfigValue& v : config.settings) {
    key_width = std::max(key_width, v.key.size());
    value_width = std::max(value_width, value_text(v).size());
  }
  for (const ConfigValue& v : config.settings) {
    fmt::print("{:<{}}  {:<{}}  {}\n", v.key, key_width, value_text(v), value_width, source_text(v, file));
  }
}

void print_json(const LoadedConfig& config, const std::string& file) {
  nlohmann::ordered_json settings = nlohmann::ordered_json::array();
  for (const ConfigValue& v : config.settings) {
    bool from_file = v.source == ConfigSource::kFile;
    settings.push_back({{"key", v.key},
                        {"value", v.value},
                        {"note", v.note},
                        {"source", from_file ? "file" : "default"},
                        {"line", from_file ? nlohmann::ordered_json(v.line) : nlohmann::ordered_json(nullptr)}});
  }
  nlohmann::ordered_json out = {{"file", file}, {"settings", settings}, {"warnings", config.warnings}};
  fmt::print("{}\n", out.dump(2));
}

int run_config(const ConfigArgs& args) {
  if (args.reference) {
    fmt::print("{}", config_reference());
    return kExitOk;
  }
  if (args.file.empty()) {
    fmt::print(stderr, "commitlog config: FILE is required (or --reference)\n");
    return kExitUsage;
  }
  Result<LoadedConfig> config = load_config_file(args.file, {.strict = args.strict});
  if (!config.ok()) {
    std::istringstream problems(config.status().message());
    for (std::string line; std::getline(problems, line);) fmt::print(stderr, "commitlog config: {}\n", line);
    return kExitUsage;
  }
  // The log reads the files the configuration names only when it opens:
  // a missing or unreadable one is found here instead.
  if (const std::string& path = config->options.archiving_properties; !path.empty()) {
    if (auto loaded = load_archiving_properties(path, *posix_file_system()); !loaded.ok()) {
      fmt::print(stderr, "commitlog config: commitlog_ext_archiving_properties: {}\n", loaded.status().to_string());
      return kExitUsage;
    }
  }
  if (args.format == "json") {
    print_json(config.value(), args.file);
  } else if (args.format == "yaml") {
    for (const std::string& warning : config->warnings) fmt::print(stderr, "warning: {}\n", warning);
    fmt::print("{}", config_as_yaml(config.value(), args.file));
  } else {
    print_text(config.value(), args.file);
  }
  // Settings that load but that the log refuses on this machine (direct I/O
  // where the file system has none) are shown with the rest, and fail.
  if (auto mode = choose_access_mode_before_open(config->options); !mode.ok()) {
    fmt::print(stderr, "commitlog config: refused here: {}\n", mode.status().message());
    return kExitRefused;
  }
  return kExitOk;
}

}  // namespace

void add_config_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<ConfigArgs>();
  CLI::App* cmd = app.add_subcommand("config", "print the effective commit-log settings of a yaml file");
  CLI::Option* file = cmd->add_option("FILE", args->file, "a commitlog.yaml or a whole cassandra.yaml");
  cmd->add_option("--format", args->format, "text, json, or yaml (a file that loads back to the same settings)")
      ->check(CLI::IsMember({"text", "json", "yaml"}))
      ->capture_default_str();
  cmd->add_flag("--strict", args->strict, "treat warnings (unknown or unsupported keys) as errors");
  cmd->add_flag("--reference", args->reference, "print the reference of every key (docs/configuration.md)")
      ->excludes(file);
  cmd->callback([args, &exit_code] { exit_code = run_config(*args); });
}

}  // namespace commitlog::tools
