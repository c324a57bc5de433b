#include "commitlog/failure_policy.h"

#include <cstdio>
#include <cstdlib>

namespace commitlog {

bool apply_failure_policy(CommitFailurePolicy policy, const char* what, const Status& error,
                          DurableWaiters& waiters) {
  std::fprintf(stderr, "commitlog: %s failed: %s\n", what, error.to_string().c_str());
  switch (policy) {
    case CommitFailurePolicy::kDie:
      std::fprintf(stderr, "commitlog: commit_failure_policy is die: aborting\n");
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
