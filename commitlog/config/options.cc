// SPDX-License-Identifier: Apache-2.0
#include "commitlog/options.h"

#include "commitlog/config/config_keys.h"

namespace commitlog {

std::vector<OptionError> Options::validate() const {
  std::vector<OptionError> errors;
  // Not keys of the configuration: the rules below would use them.
  if (file_system == nullptr) errors.push_back({"file_system", "must not be null", ""});
  if (clock == nullptr) errors.push_back({"clock", "must not be null", ""});
  if (!errors.empty()) return errors;
  for (const config::KeySpec& k : config::keys()) {
    if (k.check == nullptr) continue;
    std::string broken = k.check(*this);
    if (!broken.empty()) errors.push_back({std::string(k.name), std::move(broken), std::string(k.depends_on)});
  }
  return errors;
}

Status check_options(const Options& options) {
  std::string message;
  for (const OptionError& e : options.validate()) {
    const config::KeySpec* key = config::find_key(e.key);
    std::string shown = "Options::" + e.key;
    if (key != nullptr) {
      const std::string value = config::show(key->type->print(options));
      shown = e.key + " (" + (value.empty() ? "empty" : value) + ")";
    }
    message += (message.empty() ? "" : "\n") + shown + " " + e.message;
  }
  if (message.empty()) return {};
  return Status::invalid_argument(std::move(message));
}

}  // namespace commitlog
