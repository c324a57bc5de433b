// SPDX-License-Identifier: Apache-2.0
// What the library has to say that no caller can be told: a background
// thread's failure that the log survives (a segment kept, a CDC link not
// made, a sync failed under commit_failure_policy ignore).
#pragma once

#include <string_view>

namespace commitlog {

// Prints "commitlog: LINE" and a newline on stderr, in one write.
// Thread-safe.
void report(std::string_view line);

}  // namespace commitlog
