// `commitlog config FILE [--format text|json]`: loads a commitlog.yaml or a
// cassandra.yaml as the library would and prints every effective commit-log
// setting with where it came from.
//   text: aligned columns `key  value  source`; warnings on stderr.
//   json: {"file", "settings": [{key, value, source, line}], "warnings": [...]}
// A file that does not load: its one-line error on stderr, exit code 2.
#include <algorithm>
#include <memory>
#include <string>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "commitlog/config.h"
#include "tools/commands.h"

namespace commitlog::tools {
namespace {

std::string source_text(const ConfigValue& v, const std::string& file) {
  return v.source == ConfigSource::kFile ? fmt::format("{}:{}", file, v.line) : "default";
}

void print_text(const LoadedConfig& config, const std::string& file) {
  for (const std::string& warning : config.warnings) fmt::print(stderr, "warning: {}\n", warning);
  size_t key_width = 0, value_width = 0;
  for (const ConfigValue& v : config.settings) {
    key_width = std::max(key_width, v.key.size());
    value_width = std::max(value_width, v.value.size());
  }
  for (const ConfigValue& v : config.settings) {
    fmt::print("{:<{}}  {:<{}}  {}\n", v.key, key_width, v.value, value_width, source_text(v, file));
  }
}

void print_json(const LoadedConfig& config, const std::string& file) {
  nlohmann::ordered_json settings = nlohmann::ordered_json::array();
  for (const ConfigValue& v : config.settings) {
    bool from_file = v.source == ConfigSource::kFile;
    settings.push_back({{"key", v.key},
                        {"value", v.value},
                        {"source", from_file ? "file" : "default"},
                        {"line", from_file ? nlohmann::ordered_json(v.line) : nlohmann::ordered_json(nullptr)}});
  }
  nlohmann::ordered_json out = {{"file", file}, {"settings", settings}, {"warnings", config.warnings}};
  fmt::print("{}\n", out.dump(2));
}

}  // namespace

void add_config_command(CLI::App& app, int& exit_code) {
  CLI::App* cmd = app.add_subcommand("config", "print the effective commit-log settings of a yaml file");
  auto file = std::make_shared<std::string>();
  auto format = std::make_shared<std::string>("text");
  cmd->add_option("FILE", *file, "a commitlog.yaml or a whole cassandra.yaml")->required();
  cmd->add_option("--format", *format, "output format")->check(CLI::IsMember({"text", "json"}))->capture_default_str();
  cmd->callback([file, format, &exit_code] {
    Result<LoadedConfig> config = load_config_file(*file);
    if (!config.ok()) {
      fmt::print(stderr, "commitlog config: {}\n", config.status().message());
      exit_code = kExitUsage;
      return;
    }
    if (*format == "json") {
      print_json(config.value(), *file);
    } else {
      print_text(config.value(), *file);
    }
    exit_code = kExitOk;
  });
}

}  // namespace commitlog::tools
