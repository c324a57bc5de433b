// SPDX-License-Identifier: Apache-2.0
// What the fuzz targets do with one input, shared with the regression test
// that replays every input that ever crashed (tests/crash/fuzz_regression_test.cc).
#pragma once

#include <cstddef>
#include <span>

namespace commitlog::fuzzing {

// Parses `file` as a segment file the way the replayer does, an encrypted
// one with master key 1 of tests/support/test_keys.h. Returns the number of
// intact entries it found; must never crash or read out of bounds.
size_t read_segment(std::span<const std::byte> file);
// Loads `text` as a config file. Returns true if it loaded.
bool read_config(std::span<const std::byte> text);
// Parses `bytes` as what a client sent commitlog-kv, request after request
// as a connection does, and checks each parsed request (its bytes lie in the
// input, within the limits, and encode back to the same request). Returns
// the number of requests before the first incomplete or refused one; aborts
// when a check fails.
size_t read_requests(std::span<const std::byte> bytes);

}  // namespace commitlog::fuzzing
