// SPDX-License-Identifier: Apache-2.0
#include "segment/platform/async_direct_writes.h"

#include <linux/aio_abi.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <string>

namespace commitlog {
namespace {

// Pieces in flight at once: enough to keep the device busy while the next
// is filled; a caller fills faster or slower than the device writes, never
// both.
constexpr unsigned kInFlight = 4;

// The kernel's AIO ABI is a handful of system calls with no glibc wrappers;
// libaio would wrap exactly these.
struct ThreadContext {
  aio_context_t id = 0;
  bool ready = false;
  ThreadContext() { ready = ::syscall(SYS_io_setup, kInFlight, &id) == 0; }
  ~ThreadContext() {
    if (ready) ::syscall(SYS_io_destroy, id);
  }
};

class Submissions {
 public:
  Submissions(aio_context_t context, int fd, const std::string& path) : context_(context), fd_(fd), path_(path) {
    for (unsigned i = 0; i < kInFlight; ++i) free_[i] = i;
  }
  // Every submitted write has completed when this returns.
  ~Submissions() { reap(in_flight_); }

  bool submit(uint64_t offset, std::span<const std::byte> bytes) {
    if (in_flight_ == kInFlight) reap(1);
    if (!status_.ok()) return false;
    const unsigned slot = free_[kInFlight - 1 - in_flight_];
    iocb& cb = blocks_[slot];
    cb = iocb{};
    cb.aio_data = slot;
    cb.aio_fildes = static_cast<uint32_t>(fd_);
    cb.aio_lio_opcode = IOCB_CMD_PWRITE;
    cb.aio_buf = reinterpret_cast<uint64_t>(bytes.data());
    cb.aio_nbytes = bytes.size();
    cb.aio_offset = static_cast<int64_t>(offset);
    iocb* list[1] = {&cb};
    long n;
    do {
      n = ::syscall(SYS_io_submit, context_, 1L, list);
    } while (n < 0 && errno == EINTR);
    if (n != 1) {
      status_ = Status::from_errno(n < 0 ? errno : EAGAIN, "asynchronous write " + path_);
      return false;
    }
    ++in_flight_;
    return true;
  }

  // Waits for every write in flight, and says how they all went.
  Status finish() {
    reap(in_flight_);
    return status_;
  }

 private:
  // Waits until at least `count` writes in flight have completed.
  void reap(unsigned count) {
    while (count > 0 && in_flight_ > 0) {
      std::array<io_event, kInFlight> events;
      const long n = ::syscall(SYS_io_getevents, context_, 1L, static_cast<long>(in_flight_), events.data(), nullptr);
      if (n < 0) {
        if (errno == EINTR) continue;
        // Only a broken context fails here; the writes may still run, so
        // this thread must not return to reuse their buffers.
        std::abort();
      }
      for (long i = 0; i < n; ++i) {
        const auto slot = static_cast<unsigned>(events[i].data);
        free_[kInFlight - in_flight_] = slot;
        --in_flight_;
        const int64_t res = events[i].res;
        if (!status_.ok()) continue;
        if (res < 0) {
          status_ = Status::from_errno(static_cast<int>(-res), "asynchronous write " + path_);
        } else if (static_cast<uint64_t>(res) != blocks_[slot].aio_nbytes) {
          status_ = Status::io_error("asynchronous write " + path_ + ": " + std::to_string(res) + " of " +
                                     std::to_string(blocks_[slot].aio_nbytes) + " bytes at offset " +
                                     std::to_string(blocks_[slot].aio_offset) + " written");
        }
      }
      count -= std::min(count, static_cast<unsigned>(n));
    }
  }

  const aio_context_t context_;
  const int fd_;
  const std::string& path_;
  std::array<iocb, kInFlight> blocks_{};
  std::array<unsigned, kInFlight> free_{};  // [0, kInFlight - in_flight_) are free slots
  unsigned in_flight_ = 0;
  Status status_;
};

}  // namespace

std::optional<Status> write_filled_async(int fd, const std::string& path, uint64_t offset,
                                         std::span<const std::byte> data, size_t piece,
                                         const std::function<bool(size_t end)>& fill) {
  thread_local ThreadContext context;
  if (!context.ready) return std::nullopt;
  if (piece == 0) return Status::invalid_argument("a filled write to " + path + " in pieces of 0 bytes");
  Submissions writes(context.id, fd, path);
  for (size_t at = 0; at < data.size(); at += piece) {
    const size_t end = std::min(data.size(), at + piece);
    if (!fill(end)) {
      (void)writes.finish();
      return Status::io_error("a filled write to " + path + " stopped at offset " + std::to_string(offset + at) +
                              ": its bytes could not be made");
    }
    if (!writes.submit(offset + at, data.subspan(at, end - at))) break;
  }
  return writes.finish();
}

}  // namespace commitlog
