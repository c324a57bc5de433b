// SPDX-License-Identifier: Apache-2.0
// The fault-injecting file system's model of direct I/O and of writes with
// RWF_DSYNC (tests/support/fault_file_system.h): alignment refused as
// O_DIRECT refuses it, what a power loss keeps of a direct write, torn
// rewrites of a block, a direct write that fails midway, and durable writes.
#include <doctest/doctest.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "tests/support/fault_file_system.h"

namespace commitlog {
namespace {

using testing::CrashMode;
using testing::FaultFileSystem;
using testing::Op;

constexpr uint64_t kBlock = 4096;
constexpr char kPath[] = "/d/segment";

// `blocks` blocks, aligned to 64 KiB, each byte `fill`.
struct AlignedBlocks {
  struct Free {
    void operator()(std::byte* p) const { std::free(p); }
  };
  AlignedBlocks(size_t blocks, uint8_t fill)
      : size(blocks * kBlock),
        bytes(static_cast<std::byte*>(std::aligned_alloc(65536, (size + 65535) / 65536 * 65536))) {
    std::memset(bytes.get(), fill, size);
  }
  std::span<const std::byte> span() const { return {bytes.get(), size}; }
  size_t size;
  std::unique_ptr<std::byte, Free> bytes;
};

// A file of `blocks` zero blocks at kPath, durable, and a direct File on it.
std::unique_ptr<File> direct_file(FaultFileSystem& fs, size_t blocks) {
  REQUIRE(fs.create_dirs("/d").ok());
  {
    auto file = fs.open(kPath, OpenMode::kCreateNew);
    REQUIRE(file.ok());
    REQUIRE((*file)->allocate(0, blocks * kBlock).ok());
    REQUIRE((*file)->sync().ok());
  }
  REQUIRE(fs.sync_dir("/d").ok());
  auto file = fs.open(kPath, OpenMode::kReadWriteDirect);
  REQUIRE(file.ok());
  return std::move(file).value();
}

std::vector<std::byte> contents(FaultFileSystem& fs) {
  auto bytes = read_whole_file(fs, kPath);
  REQUIRE(bytes.ok());
  return *bytes;
}

uint8_t byte_at(const std::vector<std::byte>& bytes, size_t i) {
  REQUIRE(i < bytes.size());
  return static_cast<uint8_t>(bytes[i]);
}

TEST_CASE("direct I/O model: a write at an offset off the block boundary fails with EINVAL") {
  FaultFileSystem fs;
  auto file = direct_file(fs, 4);
  AlignedBlocks data(1, 0xab);
  const Status s = file->write_at(512, data.span());
  CHECK(s.code() == ErrorCode::kIoError);
  CHECK(s.message().find(std::strerror(EINVAL)) != std::string::npos);
  CHECK(byte_at(contents(fs), 512) == 0);
}

TEST_CASE("direct I/O model: a write of part of a block fails with EINVAL") {
  FaultFileSystem fs;
  auto file = direct_file(fs, 4);
  AlignedBlocks data(1, 0xab);
  CHECK_FALSE(file->write_at(0, data.span().first(100)).ok());
  CHECK(byte_at(contents(fs), 0) == 0);
}

TEST_CASE("direct I/O model: a write from a buffer off the block boundary fails with EINVAL") {
  FaultFileSystem fs;
  auto file = direct_file(fs, 4);
  AlignedBlocks data(2, 0xab);
  CHECK_FALSE(file->write_at(0, data.span().subspan(8, kBlock)).ok());
  CHECK(byte_at(contents(fs), 0) == 0);
}

TEST_CASE("direct I/O model: an aligned write and read go through") {
  FaultFileSystem fs;
  auto file = direct_file(fs, 4);
  AlignedBlocks data(2, 0xab), back(2, 0);
  REQUIRE(file->write_at(kBlock, data.span()).ok());
  auto got = file->read_at(kBlock, {back.bytes.get(), back.size});
  REQUIRE(got.ok());
  CHECK(*got == 2 * kBlock);
  CHECK(std::memcmp(back.bytes.get(), data.bytes.get(), data.size) == 0);
  CHECK_FALSE(file->read_at(1, {back.bytes.get(), kBlock}).ok());
}

TEST_CASE("direct I/O model: a file opened for direct I/O cannot be mapped") {
  FaultFileSystem fs;
  auto file = direct_file(fs, 4);
  CHECK_FALSE(file->map(4 * kBlock).ok());
}

TEST_CASE("direct I/O model: a direct write not synced may be lost or kept by a power loss") {
  FaultFileSystem fs;
  auto file = direct_file(fs, 4);
  AlignedBlocks data(1, 0xab);
  REQUIRE(file->write_at(0, data.span()).ok());
  fs.pull_plug();
  file.reset();
  CHECK(byte_at(contents(*fs.crash(CrashMode::kDrop, 1)), 0) == 0);
  CHECK(byte_at(contents(*fs.crash(CrashMode::kOldContents, 1)), 0) == 0);
  bool kept = false;
  for (uint64_t seed = 0; seed < 16 && !kept; ++seed) {
    kept = byte_at(contents(*fs.crash(CrashMode::kTear, seed)), 0) == 0xab;
  }
  CHECK(kept);
}

TEST_CASE("direct I/O model: a synced direct write survives every crash mode") {
  FaultFileSystem fs;
  auto file = direct_file(fs, 4);
  AlignedBlocks data(1, 0xab);
  REQUIRE(file->write_at(0, data.span()).ok());
  REQUIRE(file->sync().ok());
  fs.pull_plug();
  file.reset();
  for (CrashMode mode : testing::kAllCrashModes) {
    CAPTURE(testing::crash_mode_name(mode));
    CHECK(byte_at(contents(*fs.crash(mode, 3)), kBlock - 1) == 0xab);
  }
}

TEST_CASE(
    "direct I/O model: a torn rewrite of a block keeps the durable bytes it rewrote unchanged") {
  FaultFileSystem fs;
  auto file = direct_file(fs, 4);
  AlignedBlocks first(1, 0), second(1, 0);
  std::memset(first.bytes.get(), 0x11, 1000);  // the first flush ends inside the block
  REQUIRE(file->write_at(0, first.span()).ok());
  REQUIRE(file->sync().ok());
  std::memset(second.bytes.get(), 0x11, 1000);  // the next one rewrites it with more
  std::memset(second.bytes.get() + 1000, 0x22, 3000);
  REQUIRE(file->write_at(0, second.span()).ok());
  fs.pull_plug();
  file.reset();
  bool new_tail_kept = false, new_tail_lost = false;
  for (CrashMode mode : testing::kAllCrashModes) {
    for (uint64_t seed = 0; seed < 8; ++seed) {
      const std::vector<std::byte> image = contents(*fs.crash(mode, seed));
      for (size_t i = 0; i < 1000; ++i) REQUIRE(byte_at(image, i) == 0x11);
      (byte_at(image, 3999) == 0x22 ? new_tail_kept : new_tail_lost) = true;
    }
  }
  CHECK(new_tail_kept);
  CHECK(new_tail_lost);
}

TEST_CASE("direct I/O model: a torn direct write leaves some of its blocks old and some new") {
  FaultFileSystem fs;
  auto file = direct_file(fs, 8);
  AlignedBlocks data(8, 0xab);
  REQUIRE(file->write_at(0, data.span()).ok());
  fs.pull_plug();
  file.reset();
  const std::vector<std::byte> image = contents(*fs.crash(CrashMode::kTear, 5));
  size_t new_sectors = 0;
  for (size_t sector = 0; sector < 8 * kBlock; sector += 512)
    new_sectors += byte_at(image, sector) == 0xab;
  CHECK(new_sectors > 0);
  CHECK(new_sectors < 8 * kBlock / 512);
}

TEST_CASE(
    "direct I/O model: an injected EIO fails a direct write after its leading half of blocks") {
  FaultFileSystem fs;
  auto file = direct_file(fs, 4);
  fs.inject(Op::kWrite, EIO, 0, /*sticky=*/false);
  AlignedBlocks data(4, 0xab);
  const Status s = file->write_at(0, data.span());
  CHECK(s.code() == ErrorCode::kIoError);
  CHECK(s.message().find("injected") != std::string::npos);
  const std::vector<std::byte> now = contents(fs);
  CHECK(byte_at(now, 2 * kBlock - 1) == 0xab);
  CHECK(byte_at(now, 2 * kBlock) == 0);
}

TEST_CASE("direct I/O model: a misaligned direct write under an injected fault writes nothing") {
  FaultFileSystem fs;
  auto file = direct_file(fs, 4);
  fs.inject(Op::kWrite, EIO);
  AlignedBlocks data(4, 0xab);
  CHECK_FALSE(file->write_at(512, data.span().first(2 * kBlock)).ok());
  CHECK(byte_at(contents(fs), 512) == 0);
}

TEST_CASE("direct I/O model: a direct write with the power off writes nothing") {
  FaultFileSystem fs;
  auto file = direct_file(fs, 4);
  fs.pull_plug();
  AlignedBlocks data(4, 0xab), back(4, 0xff);
  CHECK_FALSE(file->write_at(0, data.span()).ok());
  REQUIRE(file->read_at(0, {back.bytes.get(), back.size}).ok());
  CHECK(std::to_integer<int>(back.bytes.get()[0]) == 0);
  CHECK(std::to_integer<int>(back.bytes.get()[back.size - 1]) == 0);
}

TEST_CASE(
    "direct I/O model: the block size is what the test set, and 0 refuses direct I/O naming the "
    "directory") {
  FaultFileSystem fs;
  REQUIRE(fs.create_dirs("/d").ok());
  CHECK(fs.direct_io_block_size("/d").value() == 4096);
  fs.set_direct_io_block_size(16384);
  CHECK(fs.direct_io_block_size("/d").value() == 16384);
  CHECK(fs.crash(CrashMode::kDrop, 1)->direct_io_block_size("/d").value() == 16384);
  fs.set_direct_io_block_size(0);
  const auto refused = fs.direct_io_block_size("/d");
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().code() == ErrorCode::kNotSupported);
  CHECK(refused.status().message().find("/d") != std::string::npos);
  REQUIRE(fs.open(kPath, OpenMode::kCreateNew).ok());
  CHECK_FALSE(fs.open(kPath, OpenMode::kReadWriteDirect).ok());
  CHECK(fs.direct_io_block_size("/missing").status().code() == ErrorCode::kNotFound);
}

TEST_CASE("direct I/O model: a larger block size refuses a write aligned only to 4096") {
  FaultFileSystem fs;
  fs.set_direct_io_block_size(8192);
  auto file = direct_file(fs, 4);
  AlignedBlocks data(2, 0xab);
  CHECK_FALSE(file->write_at(kBlock, data.span()).ok());
  CHECK(file->write_at(2 * kBlock, data.span()).ok());
}

TEST_CASE("dsync model: a durable write survives a power loss without a sync") {
  FaultFileSystem fs;
  auto file = direct_file(fs, 4);
  AlignedBlocks data(1, 0xab);
  REQUIRE(file->write_at_durable(kBlock, data.span()).ok());
  fs.pull_plug();
  file.reset();
  for (CrashMode mode : testing::kAllCrashModes) {
    CAPTURE(testing::crash_mode_name(mode));
    CHECK(byte_at(contents(*fs.crash(mode, 2)), 2 * kBlock - 1) == 0xab);
  }
}

TEST_CASE("dsync model: a durable write does not make other unsynced writes durable") {
  FaultFileSystem fs;
  auto file = direct_file(fs, 4);
  AlignedBlocks early(1, 0x11), durable(1, 0x22);
  REQUIRE(file->write_at(0, early.span()).ok());
  REQUIRE(file->write_at_durable(kBlock, durable.span()).ok());
  fs.pull_plug();
  file.reset();
  const std::vector<std::byte> image = contents(*fs.crash(CrashMode::kDrop, 1));
  CHECK(byte_at(image, 0) == 0);
  CHECK(byte_at(image, kBlock) == 0x22);
}

TEST_CASE("dsync model: a durable write past the end makes the size it extends to durable") {
  FaultFileSystem fs;
  REQUIRE(fs.create_dirs("/d").ok());
  auto opened = fs.open(kPath, OpenMode::kCreateNew);
  REQUIRE(opened.ok());
  std::unique_ptr<File> file = std::move(opened).value();
  REQUIRE(fs.sync_dir("/d").ok());
  const std::vector<std::byte> bytes(300, std::byte{0x33});
  REQUIRE(file->write_at_durable(100, bytes).ok());
  fs.pull_plug();
  file.reset();
  const std::vector<std::byte> image = contents(*fs.crash(CrashMode::kDrop, 1));
  CHECK(image.size() == 400);
  CHECK(byte_at(image, 399) == 0x33);
}

}  // namespace
}  // namespace commitlog
