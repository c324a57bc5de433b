// SPDX-License-Identifier: Apache-2.0
// Names the calling thread as `top`, `ps -L`, `perf` and gdb show it. The
// log's threads: cl-sync (flushes), cl-commit (fdatasync beside cl-sync in
// compressed logs), cl-segments (archiving and deleting segments) and
// cl-allocator (creates the next segment file ahead of need).
//
// `name` must be at most 15 characters (the kernel's limit); a longer one is
// cut there. Naming is best effort: a failure changes nothing else.
#pragma once

#include <pthread.h>

#include <string>

namespace commitlog {

inline void name_this_thread(const std::string& name) {
  ::pthread_setname_np(::pthread_self(), name.substr(0, 15).c_str());
}

}  // namespace commitlog
