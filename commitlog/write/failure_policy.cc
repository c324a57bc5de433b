// SPDX-License-Identifier: Apache-2.0
#include "commitlog/write/failure_policy.h"

#include <cstdlib>
#include <string>

#include "commitlog/util/report.h"

namespace commitlog {

bool apply_failure_policy(CommitFailurePolicy policy, const char* what, const Status& error,
                          DurableWaiters& waiters) {
  report(std::string(what) + " failed: " + error.to_string());
  switch (policy) {
    case CommitFailurePolicy::kDie:
      report("commit_failure_policy is die: aborting");
      std::abort();
    case CommitFailurePolicy::kIgnore:
      // Documented as risking loss: the next sync may report success for
      // pages whose write-back failed. The waiters of this one get the error.
      waiters.fail_waiting(error);
      return false;
    case CommitFailurePolicy::kStop:
    case CommitFailurePolicy::kStopCommit:
      waiters.fail(error);
      return true;
  }
  return false;
}

}  // namespace commitlog
