// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: any bytes as what a client sends commitlog-kv.
#include <cstddef>
#include <cstdint>
#include <span>

#include "tests/fuzz/fuzz_inputs.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  commitlog::fuzzing::read_requests(std::as_bytes(std::span(data, size)));
  return 0;
}
