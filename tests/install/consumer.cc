// SPDX-License-Identifier: Apache-2.0
// Opens a batch log in DIR, appends one mutation and closes: the smallest use
// of an installed commitlog.
#include <commitlog/commit_log.h>

#include <cstdio>

#ifdef EXPECT_CXX23
static_assert(__cplusplus > 202002L, "the package must not lower the consumer's C++ standard");
#endif

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  commitlog::Options options;
  options.directory = argv[1];
  options.sync_policy = "batch";
  auto log = commitlog::CommitLog::open(options);
  if (!log.ok()) {
    std::puts(log.status().to_string().c_str());
    return 1;
  }
  auto position = (*log)->append(1, "hello");
  std::printf("appended at %s\n",
              position.ok() ? position->to_string().c_str() : position.status().to_string().c_str());
  return (*log)->close().ok() ? 0 : 1;
}
