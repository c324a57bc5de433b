// SPDX-License-Identifier: Apache-2.0
// A small bounded pool of equally sized, zeroed buffers: the in-memory images
// of segments that are not mapped (compressed ones, and those written with
// commitlog_disk_access_mode standard or direct), bounded as Cassandra's
// commitlog_max_compression_buffers_in_pool bounds its compression buffers.
// acquire() blocks while every buffer is in use, which bounds the memory of
// such segments in flight and pushes back on producers through the segment
// allocator. Buffers come back only as segments finish; once the log has
// stopped (a sticky failure, close()) none may, so shut() ends the waits.
//
// Each buffer starts at a multiple of kBufferAlignment and is zeroed to
// buffer_size() rounded up to it, so direct I/O can write any block of it
// whole (blocks are powers of two up to that alignment).
//
// Thread-safety: all members are thread-safe. The pool must outlive every
// buffer it handed out.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "segment/format.h"

namespace commitlog {

inline constexpr size_t kBufferAlignment = format::kMaxDirectBlock;

class BufferPool;

struct FreeBytes {
  void operator()(std::byte* p) const { std::free(p); }
};
using AlignedBytes = std::unique_ptr<std::byte, FreeBytes>;

// `size` bytes, uninitialised, at a multiple of kBufferAlignment; nullptr if
// memory is short. An image of kHugePageSize or more starts at a multiple of
// it and asks the kernel for transparent huge pages (madvise; only advice).
inline constexpr size_t kHugePageSize = size_t{2} << 20;
AlignedBytes allocate_image(size_t size);

class PooledBuffer {
 public:
  PooledBuffer(BufferPool* pool, AlignedBytes bytes) : pool_(pool), bytes_(std::move(bytes)) {}
  PooledBuffer(PooledBuffer&&) = default;
  PooledBuffer& operator=(PooledBuffer&&) = delete;
  ~PooledBuffer();  // gives the buffer back
  std::byte* data() const { return bytes_.get(); }

 private:
  BufferPool* pool_;
  AlignedBytes bytes_;
};

class BufferPool {
 public:
  BufferPool(size_t buffer_size, size_t max_buffers);
  // A zeroed buffer of buffer_size() bytes; waits while max_buffers are out.
  // nullopt once shut() was called, also for a call waiting then.
  std::optional<PooledBuffer> acquire();
  // Ends every wait in acquire() and refuses later ones. Buffers still out
  // come back as before. Idempotent.
  void shut();
  size_t buffer_size() const { return buffer_size_; }

 private:
  friend class PooledBuffer;
  void release(AlignedBytes bytes);

  const size_t buffer_size_;
  const size_t allocated_size_;  // buffer_size_ rounded up to kBufferAlignment
  const size_t max_buffers_;
  std::mutex mu_;
  std::condition_variable cv_;
  size_t out_ = 0;                  // guarded by mu_
  bool shut_ = false;               // guarded by mu_
  std::vector<AlignedBytes> free_;  // guarded by mu_
};

}  // namespace commitlog
