// SPDX-License-Identifier: Apache-2.0
// What the log does with a failed sync or segment allocation, per
// commit_failure_policy. One place, used by the sync thread and by producers
// whose segment switch failed.
#pragma once

#include "commitlog/write/durable_waiters.h"
#include "commitlog/options.h"

namespace commitlog {

// Logs `error` (naming `what` failed) to stderr and applies `policy`:
// kDie aborts the process; kStop/kStopCommit make `waiters` fail every current
// and future wait and append with `error` (sticky); kIgnore makes only the
// waits in progress return `error` (DurableWaiters::fail_waiting).
// Returns true when the log is now stopped.
bool apply_failure_policy(CommitFailurePolicy policy, const char* what, const Status& error,
                          DurableWaiters& waiters);

}  // namespace commitlog
