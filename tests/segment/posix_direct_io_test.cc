// SPDX-License-Identifier: Apache-2.0
// The POSIX file system's direct I/O and durable writes
// (segment/platform/posix_file_system.cc, segment/platform/direct_io_probe.cc), on the disk
// under /tmp and, where the machine has one, on tmpfs.
#include <doctest/doctest.h>
#include <linux/magic.h>
#include <sys/statfs.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "commitlog/file_system.h"
#include "segment/storage/buffer_pool.h"
#include "tests/support/temp_dir.h"

namespace commitlog {
namespace {

using testing::TempDir;

bool on_tmpfs(const std::string& dir) {
  struct statfs fs {};
  return ::statfs(dir.c_str(), &fs) == 0 && fs.f_type == TMPFS_MAGIC;
}

AlignedBytes aligned(size_t size, uint8_t fill) {
  AlignedBytes bytes(
      static_cast<std::byte*>(std::aligned_alloc(65536, (size + 65535) / 65536 * 65536)));
  std::memset(bytes.get(), fill, size);
  return bytes;
}

// A new file of `size` zero bytes in `dir`, opened for direct I/O.
std::unique_ptr<File> new_direct_file(const std::string& path, uint64_t size) {
  FileSystem& fs = *posix_file_system();
  {
    auto created = fs.open(path, OpenMode::kCreateNew);
    REQUIRE(created.ok());
    REQUIRE((*created)->allocate(0, size).ok());
  }
  auto file = fs.open(path, OpenMode::kReadWriteDirect);
  REQUIRE_MESSAGE(file.ok(), file.status().to_string());
  return std::move(file).value();
}

TEST_CASE(
    "posix direct I/O: the block size of a directory on disk is a power of two of at least 4KiB") {
  TempDir dir;
  if (on_tmpfs(dir.path())) return;  // /tmp in memory: nothing to probe here
  auto block = posix_file_system()->direct_io_block_size(dir.path());
  REQUIRE_MESSAGE(block.ok(), block.status().to_string());
  CHECK(*block >= 4096);
  CHECK((*block & (*block - 1)) == 0);
  auto names = posix_file_system()->list(dir.path());
  REQUIRE(names.ok());
  CHECK(names->empty());  // the probe left nothing behind
}

TEST_CASE("posix direct I/O: a directory on tmpfs is refused, naming it") {
  const std::string shm = "/dev/shm";
  if (!on_tmpfs(shm)) return;  // no tmpfs on this machine
  auto block = posix_file_system()->direct_io_block_size(shm);
  REQUIRE_FALSE(block.ok());
  CHECK(block.status().code() == ErrorCode::kNotSupported);
  CHECK(block.status().message().find("direct I/O in /dev/shm") != std::string::npos);
  CHECK(block.status().message().find("tmpfs") != std::string::npos);
}

TEST_CASE("posix direct I/O: a missing directory is an error naming it") {
  auto block = posix_file_system()->direct_io_block_size("/nonexistent/commitlog");
  REQUIRE_FALSE(block.ok());
  CHECK(block.status().message().find("/nonexistent/commitlog") != std::string::npos);
}

TEST_CASE("posix direct I/O: aligned blocks written directly read back, buffered and direct") {
  TempDir dir;
  if (on_tmpfs(dir.path())) return;
  const uint64_t block = posix_file_system()->direct_io_block_size(dir.path()).value();
  auto file = new_direct_file(dir.file("segment"), 4 * block);
  AlignedBytes data = aligned(2 * block, 0xab), back = aligned(2 * block, 0);
  REQUIRE(file->write_at(block, {data.get(), 2 * block}).ok());
  REQUIRE(file->sync().ok());
  auto got = file->read_at(block, {back.get(), 2 * block});
  REQUIRE(got.ok());
  CHECK(std::memcmp(back.get(), data.get(), 2 * block) == 0);
  auto whole = read_whole_file(*posix_file_system(), dir.file("segment"));
  REQUIRE(whole.ok());
  REQUIRE(whole->size() == 4 * block);
  CHECK((*whole)[block] == std::byte{0xab});
  CHECK((*whole)[block - 1] == std::byte{0});
}

TEST_CASE("posix direct I/O: a misaligned direct write fails with EINVAL") {
  TempDir dir;
  if (on_tmpfs(dir.path())) return;
  const uint64_t block = posix_file_system()->direct_io_block_size(dir.path()).value();
  auto file = new_direct_file(dir.file("segment"), 4 * block);
  AlignedBytes data = aligned(2 * block, 0xab);
  const Status offset = file->write_at(100, {data.get(), block});
  CHECK(offset.message().find(std::strerror(EINVAL)) != std::string::npos);
  const Status address = file->write_at(0, {data.get() + 8, block});
  CHECK(address.message().find(std::strerror(EINVAL)) != std::string::npos);
}

TEST_CASE("posix direct I/O: a gathered write puts its blocks one after another, and a misaligned piece fails") {
  TempDir dir;
  if (on_tmpfs(dir.path())) return;
  const uint64_t block = posix_file_system()->direct_io_block_size(dir.path()).value();
  auto file = new_direct_file(dir.file("segment"), 4 * block);
  AlignedBytes one = aligned(block, 0x11), two = aligned(2 * block, 0x22), back = aligned(4 * block, 0);
  const std::span<const std::byte> pieces[] = {{one.get(), block}, {two.get(), 2 * block}};
  REQUIRE(file->write_gathered_at(block, pieces).ok());
  REQUIRE(file->read_at(0, {back.get(), 4 * block}).ok());
  CHECK(back.get()[block - 1] == std::byte{0});
  CHECK(back.get()[block] == std::byte{0x11});
  CHECK(back.get()[2 * block - 1] == std::byte{0x11});
  CHECK(back.get()[2 * block] == std::byte{0x22});
  CHECK(back.get()[4 * block - 1] == std::byte{0x22});
  const std::span<const std::byte> misaligned[] = {{one.get(), block}, {two.get(), 100}};
  const Status refused = file->write_gathered_at(0, misaligned);
  CHECK(refused.message().find(std::strerror(EINVAL)) != std::string::npos);
  CHECK(refused.message().find(dir.file("segment")) != std::string::npos);
}

// A filled write of 3.5 pieces through a file opened `mode` (direct: with
// asynchronous I/O, buffered: the interface's default), whose fill makes a
// piece's bytes only when asked and fails when asked for piece `fail_at`.
void check_filled_write(OpenMode mode, size_t fail_at) {
  TempDir dir;
  if (on_tmpfs(dir.path())) return;
  const uint64_t block = posix_file_system()->direct_io_block_size(dir.path()).value();
  const uint64_t piece = 16 * block, length = 3 * piece + piece / 2;
  std::unique_ptr<File> file = new_direct_file(dir.file("segment"), length + block);
  if (mode != OpenMode::kReadWriteDirect) file = posix_file_system()->open(dir.file("segment"), mode).value();
  AlignedBytes data = aligned(length, 0);
  std::vector<size_t> ends;
  const Status written = file->write_filled_at(block, {data.get(), length}, piece, [&](size_t end) {
    if (ends.size() == fail_at) return false;
    const size_t from = ends.empty() ? 0 : ends.back();
    for (size_t i = from; i < end; ++i) data.get()[i] = static_cast<std::byte>(1 + i / piece);
    ends.push_back(end);
    return true;
  });
  auto whole = read_whole_file(*posix_file_system(), dir.file("segment"));
  REQUIRE(whole.ok());
  CHECK((*whole)[block - 1] == std::byte{0});
  if (fail_at > 3) {
    REQUIRE_MESSAGE(written.ok(), written.to_string());
    CHECK(ends == std::vector<size_t>{piece, 2 * piece, 3 * piece, length});
    CHECK(std::memcmp(whole->data() + block, data.get(), length) == 0);
    return;
  }
  CHECK_FALSE(written.ok());
  CHECK(ends.size() == fail_at);
  // The pieces filled before were written; nothing from the failed one on.
  CHECK(std::memcmp(whole->data() + block, data.get(), fail_at * piece) == 0);
  CHECK((*whole)[block + fail_at * piece] == std::byte{0});
  CHECK((*whole)[block + length - 1] == std::byte{0});
}

TEST_CASE("posix: a filled write fills each piece before it is written, and a failed fill stops it") {
  for (OpenMode mode : {OpenMode::kReadWriteDirect, OpenMode::kReadWrite}) {
    CAPTURE(static_cast<int>(mode));
    check_filled_write(mode, 100);  // all of it
    check_filled_write(mode, 0);
    check_filled_write(mode, 2);
  }
}

TEST_CASE("posix: a gathered write of more pieces than one call takes writes them all in order") {
  TempDir dir;
  auto file = posix_file_system()->open(dir.file("f"), OpenMode::kCreateNew);
  REQUIRE(file.ok());
  std::vector<std::vector<std::byte>> bytes;
  std::vector<std::span<const std::byte>> pieces;
  std::vector<std::byte> want(7, std::byte{0});
  for (int i = 0; i < 40; ++i) {  // sizes 0 to 12, the empty ones too
    bytes.emplace_back(static_cast<size_t>(i % 13), static_cast<std::byte>(i + 1));
    want.insert(want.end(), bytes.back().begin(), bytes.back().end());
  }
  for (const auto& b : bytes) pieces.emplace_back(b);
  REQUIRE((*file)->write_gathered_at(7, pieces).ok());
  auto whole = read_whole_file(*posix_file_system(), dir.file("f"));
  REQUIRE(whole.ok());
  CHECK(*whole == want);
}

TEST_CASE("posix direct I/O: a file opened for direct I/O cannot be mapped") {
  TempDir dir;
  if (on_tmpfs(dir.path())) return;
  auto file = new_direct_file(dir.file("segment"), 1 << 16);
  CHECK_FALSE(file->map(1 << 16).ok());
}

TEST_CASE("posix: a durable write stores its bytes, also past the end of the file") {
  TempDir dir;
  auto created = posix_file_system()->open(dir.file("f"), OpenMode::kCreateNew);
  REQUIRE(created.ok());
  const std::vector<std::byte> bytes(300, std::byte{0x33});
  REQUIRE((*created)->write_at_durable(100, bytes).ok());
  CHECK((*created)->size().value() == 400);
  auto whole = read_whole_file(*posix_file_system(), dir.file("f"));
  REQUIRE(whole.ok());
  CHECK((*whole)[99] == std::byte{0});
  CHECK((*whole)[399] == std::byte{0x33});
}

TEST_CASE("posix direct I/O: a durable direct write reads back") {
  TempDir dir;
  if (on_tmpfs(dir.path())) return;
  const uint64_t block = posix_file_system()->direct_io_block_size(dir.path()).value();
  auto file = new_direct_file(dir.file("segment"), 2 * block);
  AlignedBytes data = aligned(block, 0x5a), back = aligned(block, 0);
  REQUIRE(file->write_at_durable(block, {data.get(), block}).ok());
  REQUIRE(file->read_at(block, {back.get(), block}).ok());
  CHECK(std::memcmp(back.get(), data.get(), block) == 0);
}

}  // namespace
}  // namespace commitlog
