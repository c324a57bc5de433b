// SPDX-License-Identifier: Apache-2.0
// Public API. Sync policies registered by name. The built-ins (periodic, batch, group,
// adaptive) are present from the start; an embedder adds its own with add()
// before opening the log, and the yaml key commitlog_sync selects it by name.
//
// Thread-safety: all members may be called from any thread.
#pragma once

// One clear message instead of a page of errors from C++20 library features.
#if __cplusplus < 202002L
#error "commitlog needs C++20: compile with -std=c++20 or later"
#else

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "commitlog/export.h"
#include "commitlog/status.h"
#include "commitlog/sync_policy.h"

namespace commitlog {

// The configuration values a policy may use (see conf/commitlog.yaml).
struct COMMITLOG_EXPORT PolicySettings {
  Duration sync_period = std::chrono::seconds(10);        // commitlog_sync_period
  Duration group_window = Duration::zero();               // commitlog_sync_group_window
  Duration lag_block = std::chrono::milliseconds(15000);  // periodic_commitlog_sync_lag_block
  Duration marker_interval = std::chrono::milliseconds(100);
  Duration latency_cap = std::chrono::milliseconds(2);    // adaptive: most delay it may add
};

using PolicyFactory = std::function<Result<std::unique_ptr<SyncPolicy>>(const PolicySettings&)>;

class COMMITLOG_EXPORT PolicyRegistry {
 public:
  // The process-wide registry, holding the built-in policies.
  static PolicyRegistry& global();

  // Registers `factory` under `name` (letters, digits, '-', '_', '.'); an
  // error if the name is taken or has other characters.
  Status add(const std::string& name, PolicyFactory factory);
  // Makes the policy `name`; an error listing the known names if unknown. An
  // exception from the factory, or a null policy, becomes kInvalidArgument.
  Result<std::unique_ptr<SyncPolicy>> create(const std::string& name,
                                             const PolicySettings& settings) const;
  std::vector<std::string> names() const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, PolicyFactory> factories_;
};

}  // namespace commitlog

#endif  // C++20
