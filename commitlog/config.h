// Reads the commit log's settings from yaml: our conf/commitlog.yaml, or a
// whole cassandra.yaml, with Cassandra's key names and value syntax.
//
//   commitlog_sync: periodic          # a policy name from PolicyRegistry
//   commitlog_sync_period: 10000ms    # durations: <digits><d|h|m|s|ms|us|µs|ns>
//   commitlog_segment_size: 32MiB     # sizes: <digits><GiB|MiB|KiB|B>
//   commitlog_segment_size_in_mb: 32  # old-style names take bare numbers
//
// conf/commitlog.yaml documents every key and its default. In short:
//  - keys that have nothing to do with the commit log are ignored silently;
//  - a commit-log key this library does not support (anything else starting
//    with commitlog_, cdc_ or periodic_commitlog) becomes a warning;
//  - an empty value (yaml null) means "unset": the default applies;
//  - setting both the old and the new name of one key is an error;
//  - keys of our own, not Cassandra's, start with commitlog_ext_.
// After reading, the selected policy is built once through
// PolicyRegistry::global() to check its name and its own requirements (for
// example a window > 0 for group), so an embedder registers its own policies
// before loading.
//
// Errors are kInvalidArgument (kNotSupported for a compressor other than LZ4,
// kNotFound or kIoError when the file cannot be read) with one line naming
// the file, the line, the key and the value:
//   conf/x.yaml:12: commitlog_sync_period: '10 seconds' is not a duration (expected e.g. 10000ms)
// Nothing here throws.
//
// Thread-safety: both functions may be called from any thread.
#pragma once

#include <string>
#include <vector>

#include "commitlog/options.h"
#include "commitlog/status.h"

namespace commitlog {

enum class ConfigSource { kDefault, kFile };

// One effective setting, for `commitlog config`. `key` is always the new-style
// name (commitlog_sync_period even when the file says ..._in_ms); `value` is
// in new-style syntax ("10000ms", "32MiB"); `line` is 1-based, 0 for defaults.
struct ConfigValue {
  std::string key;
  std::string value;
  ConfigSource source = ConfigSource::kDefault;
  int line = 0;
};

struct LoadedConfig {
  Options options;
  std::vector<ConfigValue> settings;  // every supported key, in conf/commitlog.yaml order
  std::vector<std::string> warnings;  // "<file>:<line>: <key> ...", one per ignored key
};

// Reads the yaml file at `path`; messages name it as given.
[[nodiscard]] Result<LoadedConfig> load_config_file(const std::string& path);
// Reads `yaml`; messages call it `name_for_errors`.
[[nodiscard]] Result<LoadedConfig> load_config_string(const std::string& yaml,
                                                      const std::string& name_for_errors);

}  // namespace commitlog
