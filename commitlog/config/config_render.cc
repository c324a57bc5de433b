// SPDX-License-Identifier: Apache-2.0
#include "commitlog/config/config_render.h"

#include <algorithm>

#include <fmt/core.h>
#include <yaml-cpp/yaml.h>

#include "commitlog/config/config_keys.h"

namespace commitlog {
namespace {

// The value as it stands after `key:` in a yaml file.
std::string yaml_value(const YAML::Node& value) { return value.IsNull() ? "" : " " + config::to_yaml(value); }

// The text before the per-key table of docs/configuration.md.
constexpr std::string_view kReferenceIntro = R"(# Configuration

The commit log reads Apache Cassandra's commit-log keys, with Cassandra's names and value syntax,
from `conf/commitlog.yaml` or from a whole `cassandra.yaml` (`load_config_file()` in
`commitlog/config.h`; the tools take `--config FILE`). This page is generated from the library's
key table by `commitlog config --reference`; a test checks that it matches.

## Values

- Durations: `<digits><unit>`, unit one of `d h m s ms us µs ns`, e.g. `10000ms`, `2s`.
- Sizes: `<digits><unit>`, unit one of `GiB MiB KiB B`, e.g. `32MiB`.
- Cassandra's keys take the coarser units their column says (ms, MiB or KiB at the finest);
  the keys of this library, which start with `commitlog_ext_`, take any unit.
- Cassandra's old names, with the unit in the name (`commitlog_sync_period_in_ms: 10000`), take a
  bare number. Setting both the old and the new name of one key is an error.
- An empty value means unset: the default applies.

## Checking a file

`commitlog config FILE` prints every effective setting and the line it came from
(`--format text|json|yaml`; `yaml` prints a file that loads back to the same settings).
Every problem of a file is reported at once, in line order, each naming the file, line, key and
value; the exit code is then 2 (1, after the settings, for one this machine refuses: `direct` on
tmpfs). Keys not the commit log's are ignored silently. These are warnings, errors with `--strict`:

- a key within two edits of a known key, or a known key without its `commitlog_` prefix
  (`did you mean commitlog_sync?`);
- any other unknown key starting with `commitlog_`, `cdc_` or `periodic_commitlog`;
- a Cassandra key of the last table whose value asks for something this library does not do.

## Keys

| key | old name | value | default | meaning |
|---|---|---|---|---|
)";

std::string default_text(const config::KeySpec& k, const Options& defaults) {
  const std::string value = config::show(k.type->print(defaults));
  std::string note(!k.zero_means.empty() && k.type->is_zero(defaults) ? k.zero_means : k.derived_default);
  if (value.empty()) return note;
  return note.empty() ? fmt::format("`{}`", value) : fmt::format("`{}` ({})", value, note);
}

}  // namespace

std::string config_as_yaml(const LoadedConfig& config, const std::string& file) {
  std::string out = fmt::format(
      "# The commit-log settings of {}: the keys it sets, under their new names;\n"
      "# every other key commented out at its default.\n",
      file);
  for (const config::KeySpec& k : config::keys()) {
    if (!k.supported()) continue;
    const auto setting = std::find_if(config.settings.begin(), config.settings.end(),
                                      [&](const ConfigValue& v) { return v.key == k.name; });
    const bool from_file = setting != config.settings.end() && setting->source == ConfigSource::kFile;
    const std::string note = setting == config.settings.end() || setting->note.empty() ? "" : "  # " + setting->note;
    out += fmt::format("{}{}:{}{}\n", from_file ? "" : "# ", k.name, yaml_value(k.type->print(config.options)), note);
  }
  return out;
}

std::string config_reference() {
  const Options defaults;
  std::string out(kReferenceIntro);
  for (const config::KeySpec& k : config::keys()) {
    if (!k.supported()) continue;
    const std::string old_name = k.old_name.empty() ? "" : fmt::format("`{}`: {}", k.old_name, k.type->old_syntax);
    out += fmt::format("| `{}` | {} | {} | {} | {} |\n", k.name, old_name, k.type->syntax, default_text(k, defaults),
                       k.doc);
  }
  out +=
      "\n## Cassandra keys read and ignored\n\n"
      "These are Cassandra's, and this library does not act on them. A value that asks for nothing it\n"
      "does not do anyway is accepted silently; any other value is a warning.\n\n"
      "| key | old name | accepted silently | |\n|---|---|---|---|\n";
  for (const config::KeySpec& k : config::keys()) {
    if (k.supported()) continue;
    const std::string old_name = k.old_name.empty() ? "" : fmt::format("`{}`", k.old_name);
    const std::string_view accepted = k.harmless == nullptr ? "no value" : k.harmless->text;
    out += fmt::format("| `{}` | {} | {} | {} |\n", k.name, old_name, accepted, k.doc);
  }
  return out;
}

}  // namespace commitlog
