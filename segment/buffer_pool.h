// A small bounded pool of equally sized, zeroed buffers: the in-memory images
// of compressed segments (Cassandra's commitlog_max_compression_buffers_in_pool).
// acquire() blocks while every buffer is in use, which bounds the memory of
// compressed segments in flight and pushes back on producers through the
// segment allocator.
//
// Thread-safety: all members are thread-safe. The pool must outlive every
// buffer it handed out.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

namespace commitlog {

class BufferPool;

class PooledBuffer {
 public:
  PooledBuffer(BufferPool* pool, std::unique_ptr<std::byte[]> bytes) : pool_(pool), bytes_(std::move(bytes)) {}
  PooledBuffer(PooledBuffer&&) = default;
  PooledBuffer& operator=(PooledBuffer&&) = delete;
  ~PooledBuffer();  // gives the buffer back
  std::byte* data() const { return bytes_.get(); }

 private:
  BufferPool* pool_;
  std::unique_ptr<std::byte[]> bytes_;
};

class BufferPool {
 public:
  BufferPool(size_t buffer_size, size_t max_buffers);
  // A zeroed buffer of buffer_size() bytes; waits while max_buffers are out.
  PooledBuffer acquire();
  size_t buffer_size() const { return buffer_size_; }

 private:
  friend class PooledBuffer;
  void release(std::unique_ptr<std::byte[]> bytes);

  const size_t buffer_size_;
  const size_t max_buffers_;
  std::mutex mu_;
  std::condition_variable cv_;
  size_t out_ = 0;                               // guarded by mu_
  std::vector<std::unique_ptr<std::byte[]>> free_;  // guarded by mu_
};

}  // namespace commitlog
