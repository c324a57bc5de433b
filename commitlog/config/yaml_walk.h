// SPDX-License-Identifier: Apache-2.0
// Walks over a configuration file's yaml that stay bounded however the file
// is made: aliases are followed as often as they are referenced, so a small
// file can stand for an exponential tree, and every walk stops after a fixed
// number of nodes.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include <yaml-cpp/yaml.h>

namespace commitlog::config {

// Whether `node` holds more than `limit` nodes, itself included.
bool has_more_nodes_than(const YAML::Node& node, size_t limit);

// A key written twice in one map.
struct RepeatedKey {
  std::string path;  // from `node`, dotted: "key_provider.parameters.key_file"
  int first_line = 0;
  int second_line = 0;
};

// The first key written twice in a map of `node` or of the maps and lists
// it holds (yaml leaves such repeats to the reader: each would otherwise
// go unseen but the first); nullopt if there is none among its first
// 10,000 nodes.
std::optional<RepeatedKey> find_repeated_key(const YAML::Node& node);

}  // namespace commitlog::config
