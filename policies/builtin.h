// SPDX-License-Identifier: Apache-2.0
// The built-in policies' factories, registered by PolicyRegistry::global().
#pragma once

#include "commitlog/policy_registry.h"

namespace commitlog {

Result<std::unique_ptr<SyncPolicy>> make_periodic_policy(const PolicySettings& settings);
Result<std::unique_ptr<SyncPolicy>> make_batch_policy(const PolicySettings& settings);
Result<std::unique_ptr<SyncPolicy>> make_group_policy(const PolicySettings& settings);
Result<std::unique_ptr<SyncPolicy>> make_adaptive_policy(const PolicySettings& settings);

}  // namespace commitlog
