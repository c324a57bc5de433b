// SPDX-License-Identifier: Apache-2.0
// The value syntax of `commitlog bench`'s options. Errors are
// kInvalidArgument naming the offending value.
//   sizes       100, 4096, 4KiB, 1MiB (tools/common/size_option.h)
//   durations   2s, 0.5s, 500ms, 250us; a bare number is seconds
//   producers   T (T threads, each running every --fibers count) or TxF
//               (T threads of F fibers each, whatever --fibers says)
//   policies    a PolicyRegistry name, optionally with a window or period:
//               batch, group:10ms, periodic:100ms
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "commitlog/policy_registry.h"
#include "commitlog/status.h"
#include "tools/lab/bench_engines.h"

namespace commitlog::tools {

struct ProducerShape {
  int threads = 1;
  int fibers = 1;  // per thread
};

[[nodiscard]] Result<uint64_t> parse_bench_size(std::string_view text);
[[nodiscard]] Result<Duration> parse_bench_duration(std::string_view text);
[[nodiscard]] Result<std::vector<ProducerShape>> parse_producers(
    const std::vector<std::string>& producers, const std::vector<std::string>& fibers);
// A commitlog EngineSpec; `base` gives the window of a bare "group"
// (10 ms when base has none).
[[nodiscard]] Result<EngineSpec> parse_policy(std::string_view text, const PolicySettings& base);

// Each commitlog variant once per value of an axis (`field` set to it);
// the other engines once. No values: the variants as they are.
std::vector<EngineSpec> expand_axis(const std::vector<EngineSpec>& variants,
                                    const std::vector<std::string>& values,
                                    std::string EngineSpec::*field);

}  // namespace commitlog::tools
