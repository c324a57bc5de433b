// SPDX-License-Identifier: Apache-2.0
// `commitlog bench ARGS` is `commitlog-bench ARGS`: the benchmark links
// RocksDB, which the CLI does not.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "tools/common/commands.h"

namespace commitlog::tools {
namespace {

constexpr const char* kBench = "commitlog-bench";

// Replaces this process with commitlog-bench; returns only when it could not.
int exec_bench(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(kBench));
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const std::string beside = (self.parent_path() / kBench).string();
    if (access(beside.c_str(), X_OK) == 0) execv(beside.c_str(), argv.data());
  }
  execvp(kBench, argv.data());
  fmt::print(stderr, "commitlog bench: cannot run {}: {}\n", kBench, std::strerror(errno));
  return kExitUsage;
}

}  // namespace

void add_bench_alias(CLI::App& app, int& exit_code) {
  CLI::App* cmd = app.add_subcommand(
      "bench", "measure durable append throughput and latency (runs commitlog-bench; see its --help)");
  cmd->set_help_flag();
  cmd->prefix_command();
  cmd->callback([cmd, &exit_code] { exit_code = exec_bench(cmd->remaining()); });
}

}  // namespace commitlog::tools
