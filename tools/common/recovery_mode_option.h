// SPDX-License-Identifier: Apache-2.0
// The recovery modes as the value of an option (the CLI's --mode,
// commitlog-kv's --recovery): a wrong one is refused listing the right ones.
#pragma once

#include <string>

namespace commitlog::tools {

// "tolerate-torn-tail, absolute, point-in-time or skip".
std::string recovery_mode_names();

// Empty when parse_recovery_mode() takes `name`; else "unknown recovery mode
// 'NAME' (expected tolerate-torn-tail, absolute, point-in-time or skip)", as
// a CLI11 check returns it.
std::string check_recovery_mode(const std::string& name);

}  // namespace commitlog::tools
