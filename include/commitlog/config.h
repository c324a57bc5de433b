// SPDX-License-Identifier: Apache-2.0
// Public API. Reads the commit log's settings from yaml: our
// conf/commitlog.yaml, or a whole cassandra.yaml, with Cassandra's key names
// and value syntax.
//
//   commitlog_sync: periodic          # a policy name from PolicyRegistry
//   commitlog_sync_period: 10000ms    # durations: <digits><d|h|m|s|ms|us|µs|ns>
//   commitlog_segment_size: 32MiB     # sizes: <digits><GiB|MiB|KiB|B>
//   commitlog_segment_size_in_mb: 32  # old-style names take bare numbers
//
// docs/configuration.md lists every key (`commitlog config --reference`
// prints it). In short:
//  - keys that have nothing to do with the commit log are ignored silently;
//  - an unknown key within two edits of a known one is a warning that names
//    it ("did you mean commitlog_sync?"), as is any other unknown key starting
//    with commitlog_, cdc_ or periodic_commitlog;
//  - a Cassandra commit-log key this library does not support is a warning,
//    unless its value asks for nothing it does not do (cdc_enabled: false);
//  - an empty value (yaml null) means "unset": the default applies;
//  - setting both the old and the new name of one key is an error;
//  - keys of our own, not Cassandra's, start with commitlog_ext_.
// The values are checked with Options::validate(). commitlog_sync must name
// a policy registered in PolicyRegistry::global(), so an embedder registers
// its own policies before loading; the policy itself is built by
// CommitLog::open, which reports a custom factory's own errors.
//
// Errors are kInvalidArgument (kNotSupported for a compressor other than LZ4,
// kNotFound or kIoError when the file cannot be read). The message holds every
// problem of the file, one per line in line order, each naming the file, the
// line, the key and the value:
//   conf/x.yaml:12: commitlog_sync_period: '10 seconds' is not a duration (expected e.g. 10000ms)
// and, among them, the file's warnings, each line starting with "warning: ".
// Nothing here throws.
//
// Thread-safety: both functions may be called from any thread.
#pragma once

// One clear message instead of a page of errors from C++20 library features.
#if __cplusplus < 202002L
#error "commitlog needs C++20: compile with -std=c++20 or later"
#else

#include <string>
#include <vector>

#include "commitlog/export.h"
#include "commitlog/file_system.h"
#include "commitlog/options.h"
#include "commitlog/status.h"

namespace commitlog {

enum class ConfigSource { kDefault, kFile };

// One effective setting, for `commitlog config`. `key` is always the new-style
// name (commitlog_sync_period even when the file says ..._in_ms); `value` is
// yaml that reads back under `key` to this setting ("10000ms", "32MiB"; empty
// for unset, as with no compression); `note` says what a value means when it
// is special ("unlimited" for 0MiB) or how a default follows other keys
// ("half of commitlog_segment_size"), else empty; `line` is 1-based, 0 for
// defaults.
struct COMMITLOG_EXPORT ConfigValue {
  std::string key;
  std::string value;
  std::string note;
  ConfigSource source = ConfigSource::kDefault;
  int line = 0;
};

struct COMMITLOG_EXPORT LoadedConfig {
  Options options;
  std::vector<ConfigValue> settings;  // every supported key, in conf/commitlog.yaml order
  std::vector<std::string> warnings;  // "<file>:<line>: <key> ...", in line order
};

struct COMMITLOG_EXPORT LoadOptions {
  // Warnings are errors: the file loads only when it has none.
  bool strict = false;
  // Reads the file. Must outlive the call.
  FileSystem* file_system = posix_file_system();
};

// Reads the yaml file at `path`; messages name it as given.
[[nodiscard]] COMMITLOG_EXPORT Result<LoadedConfig> load_config_file(const std::string& path, const LoadOptions& load = {});
// Reads `yaml`; messages call it `name_for_errors`.
[[nodiscard]] COMMITLOG_EXPORT Result<LoadedConfig> load_config_string(const std::string& yaml, const std::string& name_for_errors,
                                                      const LoadOptions& load = {});

}  // namespace commitlog

#endif  // C++20
