// SPDX-License-Identifier: Apache-2.0
// The configuration written out from the key table: a loaded file as
// commitlog.yaml keys, and the reference of every key (docs/configuration.md).
#pragma once

#include <string>

#include "commitlog/config.h"

namespace commitlog {

// `config` as a yaml file that loads back to the same settings: each key the
// file `file` set under its new name, every other key commented out at its
// default, with the note of each value as a comment.
std::string config_as_yaml(const LoadedConfig& config, const std::string& file);

// docs/configuration.md: the value syntax, then every key with its old name,
// value, default and meaning, then the Cassandra keys read and ignored.
std::string config_reference();

}  // namespace commitlog
