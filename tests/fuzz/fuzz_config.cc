// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: any bytes as a commitlog.yaml / cassandra.yaml.
#include <cstddef>
#include <cstdint>
#include <span>

#include "tests/fuzz/fuzz_inputs.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  commitlog::fuzzing::read_config(std::as_bytes(std::span(data, size)));
  return 0;
}
