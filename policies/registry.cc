// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <cctype>
#include <exception>

#include "policies/builtin.h"

namespace commitlog {
namespace {

// A name yaml can select as a plain scalar and messages can quote.
bool is_policy_name(const std::string& name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_' || c == '.';
  });
}

}  // namespace

PolicyRegistry& PolicyRegistry::global() {
  static PolicyRegistry* registry = [] {
    auto* r = new PolicyRegistry;
    r->add("periodic", make_periodic_policy).ignore();
    r->add("batch", make_batch_policy).ignore();
    r->add("group", make_group_policy).ignore();
    r->add("adaptive", make_adaptive_policy).ignore();
    return r;
  }();
  return *registry;
}

Status PolicyRegistry::add(const std::string& name, PolicyFactory factory) {
  if (!is_policy_name(name) || !factory) {
    return Status::invalid_argument("a sync policy needs a factory and a name of letters, digits, '-', '_' or '.'");
  }
  std::lock_guard lock(mu_);
  if (!factories_.emplace(name, std::move(factory)).second) {
    return Status::invalid_argument("sync policy '" + name + "' is already registered");
  }
  return {};
}

Result<std::unique_ptr<SyncPolicy>> PolicyRegistry::create(const std::string& name,
                                                           const PolicySettings& settings) const {
  PolicyFactory factory;
  {
    std::lock_guard lock(mu_);
    auto it = factories_.find(name);
    if (it != factories_.end()) factory = it->second;
  }
  if (!factory) {
    std::string known;
    for (const auto& n : names()) known += (known.empty() ? "" : ", ") + n;
    return Status::invalid_argument("commitlog_sync: unknown sync policy '" + name +
                                    "' (known: " + known + ")");
  }
  try {
    Result<std::unique_ptr<SyncPolicy>> made = factory(settings);
    if (made.ok() && *made == nullptr) {
      return Status::invalid_argument("sync policy '" + name + "' could not be made: its factory returned null");
    }
    return made;
  } catch (const std::exception& e) {
    return Status::invalid_argument("sync policy '" + name + "' could not be made: " + e.what());
  } catch (...) {
    return Status::invalid_argument("sync policy '" + name + "' could not be made");
  }
}

std::vector<std::string> PolicyRegistry::names() const {
  std::lock_guard lock(mu_);
  std::vector<std::string> out;
  for (const auto& [name, factory] : factories_) out.push_back(name);
  return out;
}

}  // namespace commitlog
