// SPDX-License-Identifier: Apache-2.0
// transparent_data_encryption_options, in Cassandra's shape:
//
//   transparent_data_encryption_options:
//     enabled: true
//     key_alias: 2                  # optional: the key id new segments use
//     key_provider:
//       - class_name: FileKeyProvider
//         parameters:
//           - key_file: /etc/commitlog/keys
//
// The key file is read when the configuration is, so its problems are
// reported against this key. Cassandra's cipher, chunk_length_kb and
// iv_length are warned about and ignored: segments are sealed with
// AES-256-GCM per section (segment/FORMAT.md).
#include <charconv>
#include <optional>

#include <fmt/core.h>

#include "commitlog/config/config_types.h"
#include "commitlog/key_provider.h"

namespace commitlog::config {
namespace {

constexpr std::string_view kKey = "transparent_data_encryption_options";
constexpr std::string_view kFileProviders[] = {"FileKeyProvider", "commitlog.FileKeyProvider"};

struct Spec {
  bool enabled = false;
  std::optional<uint32_t> key_alias;
  std::string key_file;
  YAML::Node key_file_node;  // where problems with the file are reported
};

// A Cassandra-style list of one map, or the map itself.
YAML::Node one_map(const YAML::Node& node) {
  return node.IsSequence() && node.size() == 1 ? node[0] : node;
}

std::string field_key(std::string_view field) { return fmt::format("{}.{}", kKey, field); }

// key_provider: [{class_name: FileKeyProvider, parameters: [{key_file: PATH}]}].
bool read_provider(const YAML::Node& node, Spec& spec, Problems& problems) {
  const YAML::Node provider = one_map(node);
  const int line = line_of(node);
  if (!provider.IsMap()) {
    problems.error(field_key("key_provider"), line, node, "expected {class_name: FileKeyProvider, parameters: ...}");
    return false;
  }
  const YAML::Node class_name = provider["class_name"];
  const std::string name = class_name && class_name.IsScalar() ? class_name.Scalar() : "";
  bool known = false;
  for (std::string_view n : kFileProviders) known = known || name == n;
  if (!known) {
    const bool jks = name.find("JKS") != std::string::npos;
    problems.error(field_key("key_provider.class_name"), line_of(class_name ? class_name : provider),
                   class_name ? class_name : provider,
                   fmt::format("is not supported{} (supported: FileKeyProvider, master keys in a file of "
                               "'<id> <64 hex digits>' lines with mode 0600)",
                               jks ? ": a JKS keystore cannot be read here" : ""),
                   ErrorCode::kNotSupported);
    return false;
  }
  const YAML::Node params = provider["parameters"] ? one_map(provider["parameters"]) : YAML::Node();
  const YAML::Node file = params.IsMap() ? params["key_file"] : YAML::Node();
  if (!file || !file.IsScalar() || file.Scalar().empty()) {
    problems.error(field_key("key_provider.parameters"), line, provider,
                   "has no key_file (expected parameters: [{key_file: /path/to/keys}])");
    return false;
  }
  spec.key_file = file.Scalar();
  spec.key_file_node = file;
  return true;
}

std::optional<Spec> read_spec(const Setting& s, Problems& problems) {
  if (!s.value.IsMap()) {
    problems.error(s, "expected a map: {enabled: true, key_provider: [{class_name: FileKeyProvider, ...}]}");
    return std::nullopt;
  }
  Spec spec;
  // Disabled, the rest asks for nothing: cassandra.yaml's own block (a JKS
  // keystore, enabled: false) loads silently.
  const YAML::Node enabled = s.value["enabled"];
  if (!enabled || (enabled.IsScalar() && enabled.Scalar() == "false")) return spec;
  bool ok = true;
  for (auto it = s.value.begin(); it != s.value.end(); ++it) {
    const std::string field = show_written(it->first);
    const YAML::Node v = it->second;  // a copy: the iterator yields a temporary
    if (field == "enabled") {
      if (!v.IsScalar() || (v.Scalar() != "true" && v.Scalar() != "false")) {
        problems.error(field_key(field), line_of(v), v, "expected true or false");
        ok = false;
      }
      spec.enabled = v.IsScalar() && v.Scalar() == "true";
    } else if (field == "key_alias") {
      uint32_t id = 0;
      const std::string text = v.IsScalar() ? v.Scalar() : "";
      const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
      if (text.empty() || ec != std::errc() || end != text.data() + text.size()) {
        problems.error(field_key(field), line_of(v), v, "expected a key id of the key file (a decimal number)");
        ok = false;
      }
      spec.key_alias = id;
    } else if (field == "key_provider") {
      ok = read_provider(v, spec, problems) && ok;
    } else if (field == "cipher" || field == "chunk_length_kb" || field == "iv_length") {
      problems.warn(line_of(it->first), fmt::format("{} is ignored: each section is sealed with AES-256-GCM", field_key(field)));
    } else {
      problems.error(s, fmt::format("has an unknown field '{}' on line {} (expected enabled, key_alias, key_provider)",
                                    field, line_of(it->first)));
      ok = false;
    }
  }
  if (ok && spec.enabled && spec.key_file.empty()) {
    problems.error(s, "is enabled without a key_provider (expected [{class_name: FileKeyProvider, parameters: "
                      "[{key_file: /path/to/keys}]}])");
    ok = false;
  }
  return ok ? std::optional<Spec>(spec) : std::nullopt;
}

}  // namespace

ValueType encryption(Access<std::shared_ptr<const KeyProvider>> field) {
  return {.read =
              [field](const Setting& s, Options& o, Problems& problems) {
                const std::optional<Spec> spec = read_spec(s, problems);
                if (!spec) return;
                if (!spec->enabled) return field.set(o, nullptr);
                auto keys = load_key_file(spec->key_file, spec->key_alias, *o.file_system);
                if (!keys.ok()) {
                  // "...key_file: '/etc/keys' is refused: key file /etc/keys has mode 0644: ..."
                  return problems.error(field_key("key_provider.parameters.key_file"), line_of(spec->key_file_node),
                                        spec->key_file_node, "is refused: " + keys.status().message(),
                                        keys.status().code());
                }
                field.set(o, std::move(keys).value());
              },
          .print =
              [field](const Options& o) {
                const std::shared_ptr<const KeyProvider> keys = field.get(o);
                YAML::Node spec;
                spec["enabled"] = keys != nullptr;
                if (keys == nullptr) return spec;
                spec["key_alias"] = keys->active_key_id();
                YAML::Node params;
                params["key_file"] = keys->source();
                YAML::Node provider;
                provider["class_name"] = "FileKeyProvider";
                provider["parameters"].push_back(params);
                spec["key_provider"].push_back(provider);
                return spec;
              },
          .is_zero = [field](const Options& o) { return field.get(o) == nullptr; },
          .syntax = "a map {enabled: true, key_alias: ID, key_provider: [{class_name: FileKeyProvider, "
                    "parameters: [{key_file: PATH}]}]}",
          .old_syntax = {}};
}

}  // namespace commitlog::config
