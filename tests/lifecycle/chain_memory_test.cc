// SPDX-License-Identifier: Apache-2.0
// Retired segments are freed: a log that runs through ten thousand small
// segments (each discarded and deleted) holds no more heap at the end than
// after the first thousand.
#include <doctest/doctest.h>

#include <cstddef>
#include <string>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define COMMITLOG_TEST_SANITIZED_HEAP 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define COMMITLOG_TEST_SANITIZED_HEAP 1
#endif
#endif
#ifdef COMMITLOG_TEST_SANITIZED_HEAP
// The sanitizer runtimes' own count (sanitizer/allocator_interface.h, which
// GCC's packages do not ship).
extern "C" size_t __sanitizer_get_current_allocated_bytes();
#else
#include <malloc.h>
#endif

#include "commitlog/commit_log.h"
#include "tests/support/log_files.h"
#include "tests/support/temp_dir.h"

namespace commitlog {
namespace {

// Bytes the process has allocated and not freed.
size_t heap_in_use() {
#ifdef COMMITLOG_TEST_SANITIZED_HEAP
  return __sanitizer_get_current_allocated_bytes();
#else
  return mallinfo2().uordblks;
#endif
}

TEST_CASE("segment chain: ten thousand segments leave the log's own memory flat") {
  testing::TempDir dir;
  Options options;
  options.directory = dir.path();
  options.sync_policy = "periodic";
  options.segment_size = 4 << 10;
  auto log = testing::open_log(options);
  const std::string payload(1500, 'm');  // two entries per segment
  const uint64_t first = log->append(1, payload)->segment;
  size_t warm = 0;
  Position last;
  for (uint64_t segments = 0; segments < 10'000;) {
    auto position = log->append(1, payload);
    REQUIRE_MESSAGE(position.ok(), position.status().to_string());
    last = *position;
    if (last.segment - first == segments) continue;
    segments = last.segment - first;
    if (segments % 100 == 0) REQUIRE(log->discard(1, last).ok());
    if (segments == 1'000) warm = heap_in_use();
  }
  REQUIRE(log->sync().ok());
  REQUIRE(log->discard(1, last).ok());
  const size_t grown = heap_in_use() - std::min(heap_in_use(), warm);
  CAPTURE(warm);
  // Nine thousand segments kept as objects would hold megabytes.
  CHECK(grown < 512 * 1024);
  REQUIRE(log->close().ok());
}

}  // namespace
}  // namespace commitlog
