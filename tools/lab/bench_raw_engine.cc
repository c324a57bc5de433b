// SPDX-License-Identifier: Apache-2.0
// The `raw` reference: the simplest ideal group commit, against which the
// commit log's durable throughput and latency are judged.
//
// A producer reserves space with one fetch_add, pwritev()s its record (a
// 16-byte header: length, checksum of the payload, sequence; then the
// payload) into one file, and takes a ticket. If no fdatasync is running it
// becomes the leader and runs one for every ticket taken so far; otherwise
// it waits for the fdatasync that covers its ticket. With one producer this
// is plain write + fdatasync: the floor for a durable append.
//
// `raw`: the file is preallocated with posix_fallocate, as the log's segments
// are, in steps of max(64 MiB, 16 records) kept half a step ahead of the
// writers; nothing is ever overwritten, so large records cost raw fresh
// blocks too. `raw-overwrite`: the same on a pre-written ring
// (bench_raw_file.h), so every write overwrites written blocks.
//
// With fiber producers the mutex and condition variable are Boost.Fiber's, so
// a waiting fiber suspends only itself (the leader's fdatasync blocks its
// thread); with thread producers they are std's, the cheapest way for a
// thread to sleep and be woken (a futex).
#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <boost/fiber/condition_variable.hpp>
#include <boost/fiber/mutex.hpp>
#include <cerrno>
#include <condition_variable>
#include <mutex>

#include "tools/lab/bench_engines.h"
#include "tools/lab/bench_raw_file.h"

namespace commitlog::tools {
namespace {

template <typename Mutex, typename CondVar>
class RawEngine final : public BenchEngine {
 public:
  // `ring` > 0: the file is a pre-written ring of that many bytes.
  RawEngine(int fd, uint64_t step, uint64_t ring)
      : fd_(fd), step_(step), ring_(ring), allocated_(step) {}
  ~RawEngine() override { close().ignore(); }

  Status append(uint64_t, uint64_t seq, std::span<const std::byte> payload) override {
    std::array<std::byte, kRawHeaderSize> header{};
    encode_raw_header(header.data(), payload, seq);
    const uint64_t length = kRawHeaderSize + payload.size();
    const uint64_t start = next_.fetch_add(length, std::memory_order_relaxed);
    if (ring_ == 0) CL_RETURN_IF_ERROR(preallocate(start + length + step_ / 2));
    CL_RETURN_IF_ERROR(write_record(header, payload, ring_ == 0 ? start : start % ring_));
    return wait_durable();
  }

  uint64_t syncs() const override { return syncs_.load(std::memory_order_relaxed); }

  Status close() override {
    if (fd_ >= 0 && ::close(fd_) != 0) {
      fd_ = -1;
      return Status::from_errno(errno, "close raw file");
    }
    fd_ = -1;
    return {};
  }

 private:
  // Extends the preallocated space past `end`. Nothing suspends while
  // grow_mu_ is held, so a plain mutex is safe for fibers too.
  Status preallocate(uint64_t end) {
    if (end <= allocated_.load(std::memory_order_acquire)) return {};
    std::lock_guard lock(grow_mu_);
    for (uint64_t at; (at = allocated_.load()) < end;) {
      if (const int err = ::posix_fallocate(fd_, static_cast<off_t>(at), static_cast<off_t>(step_));
          err != 0) {
        return Status::from_errno(err, "fallocate raw file");
      }
      allocated_.store(at + step_, std::memory_order_release);
    }
    return {};
  }

  Status write_record(const std::array<std::byte, kRawHeaderSize>& header,
                      std::span<const std::byte> payload, uint64_t at) {
    std::array<iovec, 2> iov{{{const_cast<std::byte*>(header.data()), header.size()},
                              {const_cast<std::byte*>(payload.data()), payload.size()}}};
    iovec* next = iov.data();
    int n = 2;
    while (n > 0) {
      const ssize_t written = ::pwritev(fd_, next, n, static_cast<off_t>(at));
      if (written < 0) {
        if (errno == EINTR) continue;
        return Status::from_errno(errno, "pwritev raw file");
      }
      at += static_cast<uint64_t>(written);
      for (auto left = static_cast<size_t>(written); n > 0 && (left > 0 || next->iov_len == 0);) {
        const size_t step = std::min(left, next->iov_len);
        next->iov_base = static_cast<std::byte*>(next->iov_base) + step;
        next->iov_len -= step;
        left -= step;
        if (next->iov_len == 0) ++next, --n;
      }
    }
    return {};
  }

  // Every write before this producer's ticket is complete, so one fdatasync
  // started after taking the ticket covers it.
  Status wait_durable() {
    std::unique_lock lock(mu_);
    const uint64_t ticket = ++written_;
    while (durable_ < ticket && error_.ok()) {
      if (syncing_) {
        cv_.wait(lock);
        continue;
      }
      syncing_ = true;
      const uint64_t target = written_;
      lock.unlock();
      const int rc = ::fdatasync(fd_);
      const int err = errno;
      syncs_.fetch_add(1, std::memory_order_relaxed);
      lock.lock();
      syncing_ = false;
      if (rc != 0) {
        error_ = Status::from_errno(err, "fdatasync raw file");
      } else {
        durable_ = target;
      }
      cv_.notify_all();
    }
    return durable_ >= ticket ? Status{} : error_;
  }

  int fd_;
  const uint64_t step_;
  const uint64_t ring_;
  std::atomic<uint64_t> next_{0};    // where the next record goes, before wrapping
  std::atomic<uint64_t> allocated_;  // bytes preallocated
  std::mutex grow_mu_;
  std::atomic<uint64_t> syncs_{0};
  Mutex mu_;
  CondVar cv_;
  uint64_t written_ = 0;  // tickets taken; guarded by mu_
  uint64_t durable_ = 0;  // tickets covered by a completed fdatasync; guarded by mu_
  bool syncing_ = false;  // guarded by mu_
  Status error_;          // guarded by mu_
};

}  // namespace

Result<std::unique_ptr<BenchEngine>> open_raw_engine(const EngineSetup& setup, bool prewritten) {
  const std::string path = setup.directory + "/raw.log";
  const uint64_t record = kRawHeaderSize + setup.record_size;
  const uint64_t step = std::max<uint64_t>(64ull << 20, 16 * record);
  const uint64_t ring = prewritten ? ring_bytes(record) : 0;
  auto fd = create_raw_file(path, prewritten ? ring : step, prewritten);
  if (!fd.ok()) return fd.status();
  if (setup.fibers > 1) {
    return std::unique_ptr<BenchEngine>(
        new RawEngine<boost::fibers::mutex, boost::fibers::condition_variable>(*fd, step, ring));
  }
  return std::unique_ptr<BenchEngine>(
      new RawEngine<std::mutex, std::condition_variable>(*fd, step, ring));
}

}  // namespace commitlog::tools
