// SPDX-License-Identifier: Apache-2.0
// The images of segments that are not mapped: aligned for direct I/O,
// zeroed whenever handed out, and, from 2 MiB on, in huge pages where the
// kernel has them, so a direct write of a large payload pins few pages.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "segment/storage/buffer_pool.h"

namespace commitlog {
namespace {

// The VmFlags of the mapping of this process that holds `address`, or ""
// if /proc/self/smaps lists none.
std::string vm_flags_of(const void* address) {
  const auto at = reinterpret_cast<uintptr_t>(address);
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    uintptr_t from = 0;
    uintptr_t to = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> from >> dash >> to && dash == '-') {
      inside = from <= at && at < to;
    } else if (inside && line.starts_with("VmFlags:")) {
      return line;
    }
  }
  return "";
}

TEST_CASE("segment images: aligned for direct I/O, and huge-page aligned from 2 MiB on") {
  // Any size: aligned_alloc wants a multiple of the alignment, which
  // allocate_image() rounds to.
  for (const size_t size : {size_t{64} << 10, size_t{12} << 10, (size_t{3} << 20) + 4096}) {
    CAPTURE(size);
    const AlignedBytes image = allocate_image(size);
    REQUIRE(image);
    CHECK(reinterpret_cast<uintptr_t>(image.get()) % kBufferAlignment == 0);
    std::memset(image.get(), 1, size);
  }

  const AlignedBytes large = allocate_image(32 << 20);
  REQUIRE(large);
  CHECK(reinterpret_cast<uintptr_t>(large.get()) % kHugePageSize == 0);
  std::memset(large.get(), 1, 32 << 20);  // the whole of it is there to write
}

TEST_CASE("segment images: a large image asks the kernel for transparent huge pages") {
  if (!std::filesystem::exists("/sys/kernel/mm/transparent_hugepage/enabled")) {
    MESSAGE("skipped: this kernel has no transparent huge pages");
    return;
  }
  const AlignedBytes large = allocate_image(8 << 20);
  REQUIRE(large);
  const std::string flags = vm_flags_of(large.get());
  CAPTURE(flags);
  CHECK(flags.find(" hg") != std::string::npos);
  CHECK(vm_flags_of(large.get() + (8 << 20) - 1) == flags);
}

TEST_CASE("buffer pool: a buffer handed out again is zeroed, whatever it held") {
  BufferPool pool(4 << 20, 1);
  std::byte* first = nullptr;
  {
    auto buffer = pool.acquire();
    REQUIRE(buffer);
    first = buffer->data();
    std::memset(buffer->data(), 0xab, 4 << 20);
  }
  auto again = pool.acquire();
  REQUIRE(again);
  CHECK(again->data() == first);
  bool zero = true;
  for (size_t i = 0; i < (4u << 20); i += 4093) zero = zero && again->data()[i] == std::byte{0};
  CHECK(zero);
  CHECK(again->data()[(4u << 20) - 1] == std::byte{0});
}

}  // namespace
}  // namespace commitlog
