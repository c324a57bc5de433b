// SPDX-License-Identifier: Apache-2.0
// The built-in sync policies that acknowledge a mutation only once it is
// durable: the ones every crash and fault test must run.
#pragma once

#include <array>

namespace commitlog::testing {

inline constexpr std::array<const char*, 3> kDurablePolicies = {"batch", "group", "adaptive"};

}  // namespace commitlog::testing
