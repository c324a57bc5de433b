// SPDX-License-Identifier: Apache-2.0
// The `raw-direct` reference: O_DIRECT + O_DSYNC writes on a pre-written
// file, the disk's own answer to "write this durably now".
//
// Each append copies its record (bench_raw_file.h's header, then the
// payload) into its thread's aligned buffer, pads it with zeros to whole
// blocks of the device (FileSystem::direct_io_block_size()), and pwrite()s
// it at its own block-aligned place in the pre-written ring; the write
// returns once durable (O_DSYNC), so there is no fdatasync and no group
// commit: with one producer and records of up to a block this is fio's
// 4 KiB O_DIRECT + O_DSYNC overwrite run; with more, the producers' writes
// meet in the device queue. Each write counts as a sync.
//
// `raw-direct-fdatasync` is the same with O_DIRECT alone and an fdatasync
// after each write, for the choice between the two ways to make a direct
// write durable.
//
// A write blocks its thread, so fibers on one thread take turns.
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "commitlog/file_system.h"
#include "tools/lab/bench_engines.h"
#include "tools/lab/bench_raw_file.h"

namespace commitlog::tools {
namespace {

// One thread's block-aligned record buffer, grown to the largest record.
struct AlignedBuffer {
  struct Free {
    void operator()(std::byte* p) const { std::free(p); }
  };
  std::unique_ptr<std::byte, Free> bytes;
  uint64_t size = 0;

  // REQUIRES: bytes_needed is a multiple of alignment, a power of two.
  std::byte* reserve(uint64_t bytes_needed, uint64_t alignment) {
    if (bytes_needed > size) {
      bytes.reset(static_cast<std::byte*>(std::aligned_alloc(alignment, bytes_needed)));
      size = bytes ? bytes_needed : 0;
    }
    return bytes.get();
  }
};

class RawDirectEngine final : public BenchEngine {
 public:
  RawDirectEngine(int fd, uint64_t block, uint64_t padded, uint64_t ring, bool fdatasync)
      : fd_(fd), block_(block), padded_(padded), ring_(ring), fdatasync_(fdatasync) {}
  ~RawDirectEngine() override { close().ignore(); }

  Status append(uint64_t, uint64_t seq, std::span<const std::byte> payload) override {
    // No fiber switch can come between filling and writing the buffer: the
    // write blocks the thread.
    thread_local AlignedBuffer buffer;
    std::byte* record = buffer.reserve(padded_, block_);
    if (record == nullptr) return Status::from_errno(ENOMEM, "raw-direct buffer");
    encode_raw_header(record, payload, seq);
    std::memcpy(record + kRawHeaderSize, payload.data(), payload.size());
    const uint64_t used = kRawHeaderSize + payload.size();
    std::memset(record + used, 0, padded_ - used);
    const uint64_t at = next_.fetch_add(padded_, std::memory_order_relaxed) % ring_;
    for (uint64_t done = 0; done < padded_;) {
      const ssize_t n = ::pwrite(fd_, record + done, padded_ - done, static_cast<off_t>(at + done));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return Status::from_errno(errno, "O_DIRECT write to the raw-direct file");
      done += static_cast<uint64_t>(n);
    }
    if (fdatasync_ && ::fdatasync(fd_) != 0)
      return Status::from_errno(errno, "fdatasync raw-direct file");
    syncs_.fetch_add(1, std::memory_order_relaxed);
    return {};
  }

  uint64_t syncs() const override { return syncs_.load(std::memory_order_relaxed); }
  bool suspends_fibers() const override { return false; }

  Status close() override {
    const int fd = fd_;
    fd_ = -1;
    if (fd >= 0 && ::close(fd) != 0) return Status::from_errno(errno, "close raw-direct file");
    return {};
  }

 private:
  int fd_;
  const uint64_t block_;
  const uint64_t padded_;  // a record padded to whole blocks
  const uint64_t ring_;
  const bool fdatasync_;  // else every write is O_DSYNC
  std::atomic<uint64_t> next_{0};
  std::atomic<uint64_t> syncs_{0};
};

}  // namespace

Result<std::unique_ptr<BenchEngine>> open_raw_direct_engine(const EngineSetup& setup,
                                                            bool fdatasync) {
  auto block = posix_file_system()->direct_io_block_size(setup.directory);
  if (!block.ok()) return block.status();
  const uint64_t padded = (kRawHeaderSize + setup.record_size + *block - 1) / *block * *block;
  const uint64_t ring = ring_bytes(padded);
  auto fd = create_raw_file(setup.directory + "/raw-direct.log", ring, /*prewritten=*/true,
                            fdatasync ? O_DIRECT : O_DIRECT | O_DSYNC);
  if (!fd.ok()) return fd.status();
  return std::unique_ptr<BenchEngine>(new RawDirectEngine(*fd, *block, padded, ring, fdatasync));
}

}  // namespace commitlog::tools
