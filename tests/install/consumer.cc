#include "commitlog/commit_log.h"
#include <cstdio>
int main(int argc, char** argv) {
  if (argc < 2) return 2;
  commitlog::Options o; o.directory = argv[1]; o.sync_policy = "batch";
  auto log = commitlog::CommitLog::open(o);
  if (!log.ok()) { std::puts(log.status().to_string().c_str()); return 1; }
  auto p = (*log)->append(1, "hello");
  std::printf("appended at %s\n", p.ok() ? p->to_string().c_str() : p.status().to_string().c_str());
  return (*log)->close().ok() ? 0 : 1;
}
