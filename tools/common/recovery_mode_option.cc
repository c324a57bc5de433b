// SPDX-License-Identifier: Apache-2.0
#include "tools/common/recovery_mode_option.h"

#include "commitlog/replayer.h"

namespace commitlog::tools {

std::string recovery_mode_names() {
  // "strict", an old name of tolerate-torn-tail, is taken but not offered.
  return std::string(recovery_mode_name(RecoveryMode::kTolerateTornTail)) + ", " +
         recovery_mode_name(RecoveryMode::kAbsolute) + ", " +
         recovery_mode_name(RecoveryMode::kPointInTime) + " or " +
         recovery_mode_name(RecoveryMode::kSkip);
}

std::string check_recovery_mode(const std::string& name) {
  if (parse_recovery_mode(name)) return {};
  return "unknown recovery mode '" + name + "' (expected " + recovery_mode_names() + ")";
}

}  // namespace commitlog::tools
