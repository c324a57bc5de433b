// SPDX-License-Identifier: Apache-2.0
// commitlog-bench: the benchmark, a binary of its own so that the commitlog
// CLI links no peer engine (RocksDB).
#include <exception>

#include <fmt/core.h>

#include "tools/common/commands.h"

int main(int argc, char** argv) {
  using namespace commitlog::tools;
  CLI::App app{
      "commitlog-bench: measure durable append throughput, latency and CPU per op by policy and "
      "producers, next to raw fdatasync group commit and RocksDB (exit 1 if a point failed)"};
  app.set_version_flag("-V,--version", "commitlog-bench " COMMITLOG_VERSION);
  int exit_code = kExitOk;
  add_bench_options(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitUsage;
  } catch (const std::exception& e) {
    fmt::print(stderr, "commitlog-bench: {}\n", e.what());
    return kExitUsage;
  }
  return exit_code;
}
