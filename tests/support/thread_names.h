// SPDX-License-Identifier: Apache-2.0
// The names of a process's threads, as /proc shows them (thread_name.h).
#pragma once

#include <sys/types.h>

#include <set>
#include <string>

namespace commitlog::testing {

// Every thread's name (/proc/<pid>/task/*/comm), each once; empty when the
// process is gone. Threads name themselves when they start, so it reads
// again, for up to 5 s, until every name in `awaited` is there.
std::set<std::string> thread_names(pid_t pid, const std::set<std::string>& awaited = {});

}  // namespace commitlog::testing
