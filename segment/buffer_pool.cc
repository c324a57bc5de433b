#include "segment/buffer_pool.h"

#include <cstring>

namespace commitlog {

PooledBuffer::~PooledBuffer() {
  if (bytes_) pool_->release(std::move(bytes_));
}

BufferPool::BufferPool(size_t buffer_size, size_t max_buffers)
    : buffer_size_(buffer_size), max_buffers_(max_buffers == 0 ? 1 : max_buffers) {}

PooledBuffer BufferPool::acquire() {
  std::unique_ptr<std::byte[]> bytes;
  {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return out_ < max_buffers_; });
    ++out_;
    if (!free_.empty()) {
      bytes = std::move(free_.back());
      free_.pop_back();
    }
  }
  // Zeroed outside the lock: a reused image must not show old entries.
  if (bytes) {
    std::memset(bytes.get(), 0, buffer_size_);
  } else {
    bytes.reset(new std::byte[buffer_size_]());
  }
  return PooledBuffer(this, std::move(bytes));
}

void BufferPool::release(std::unique_ptr<std::byte[]> bytes) {
  {
    std::lock_guard lock(mu_);
    --out_;
    free_.push_back(std::move(bytes));
  }
  cv_.notify_one();
}

}  // namespace commitlog
