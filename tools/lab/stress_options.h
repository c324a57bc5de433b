// SPDX-License-Identifier: Apache-2.0
// The options of `commitlog stress` (stress_command.cc): its flags, and the
// log's Options they make with --config, checked so that an error names the
// flag that sets a value as well as its yaml key.
#pragma once

#include <cstdint>
#include <string>

#include "commitlog/options.h"
#include "commitlog/status.h"
#include "tools/lab/stress_workload.h"

namespace CLI {
class Option;
}  // namespace CLI

namespace commitlog::tools::stress {

struct StressArgs {
  std::string dir;
  std::string config;
  std::string key_file;
  std::string policy;
  double period_ms = 0;
  double window_ms = 0;
  uint64_t segment_size = 0;
  int threads = 4;
  int fibers = 4;
  uint64_t max_size = kDefaultMaxSize;
  std::string acks;
  double duration = 0;
  double rate = 0;
  std::string wait = "policy";
  bool check = false;
  bool allow_loss = false;
  bool discard = false;
  // Which of the optional flags were given.
  CLI::Option* policy_flag = nullptr;
  CLI::Option* period_flag = nullptr;
  CLI::Option* window_flag = nullptr;
  CLI::Option* segment_size_flag = nullptr;
};

// The log's options: --config's, then the flags given over them.
[[nodiscard]] Result<Options> build_options(const StressArgs& args);

// check_options(), each message naming the flag behind its key too.
[[nodiscard]] Status check_driver_options(const Options& options);

}  // namespace commitlog::tools::stress
