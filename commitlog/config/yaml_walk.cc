// SPDX-License-Identifier: Apache-2.0
#include "commitlog/config/yaml_walk.h"

#include <map>

#include "commitlog/config/config_types.h"

namespace commitlog::config {
namespace {

constexpr size_t kRepeatSearchNodes = 10'000;

// Visits `node` and what it holds, depth first, while `budget` lasts;
// `visit(node, path)` returns false to stop. False when stopped either way.
template <typename Visit>
bool walk(const YAML::Node& node, const std::string& path, size_t& budget, const Visit& visit) {
  if (budget == 0) return false;
  --budget;
  if (!visit(node, path)) return false;
  if (node.IsMap()) {
    for (auto it = node.begin(); it != node.end(); ++it) {
      const std::string key = it->first.IsScalar() ? it->first.Scalar() : "?";
      if (!walk(it->second, path.empty() ? key : path + "." + key, budget, visit)) return false;
    }
  } else if (node.IsSequence()) {
    for (auto it = node.begin(); it != node.end(); ++it) {
      if (!walk(YAML::Node(*it), path, budget, visit)) return false;
    }
  }
  return true;
}

}  // namespace

bool has_more_nodes_than(const YAML::Node& node, size_t limit) {
  size_t budget = limit;
  return !walk(node, "", budget, [](const YAML::Node&, const std::string&) { return true; });
}

std::optional<RepeatedKey> find_repeated_key(const YAML::Node& node) {
  std::optional<RepeatedKey> found;
  size_t budget = kRepeatSearchNodes;
  walk(node, "", budget, [&](const YAML::Node& n, const std::string& path) {
    if (!n.IsMap()) return true;
    std::map<std::string, int> lines;
    for (auto it = n.begin(); it != n.end(); ++it) {
      if (!it->first.IsScalar()) continue;
      const std::string& key = it->first.Scalar();
      const int line = line_of(it->first);
      if (auto [first, inserted] = lines.emplace(key, line); !inserted) {
        found = RepeatedKey{path.empty() ? key : path + "." + key, first->second, line};
        return false;
      }
    }
    return true;
  });
  return found;
}

}  // namespace commitlog::config
