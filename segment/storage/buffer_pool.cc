// SPDX-License-Identifier: Apache-2.0
#include "segment/storage/buffer_pool.h"

#include <cstring>
#include <new>

namespace commitlog {

PooledBuffer::~PooledBuffer() {
  if (bytes_) pool_->release(std::move(bytes_));
}

BufferPool::BufferPool(size_t buffer_size, size_t max_buffers)
    : buffer_size_(buffer_size),
      allocated_size_((buffer_size + kBufferAlignment - 1) / kBufferAlignment * kBufferAlignment),
      max_buffers_(max_buffers == 0 ? 1 : max_buffers) {}

std::optional<PooledBuffer> BufferPool::acquire() {
  AlignedBytes bytes;
  {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return shut_ || out_ < max_buffers_; });
    if (shut_) return std::nullopt;
    ++out_;
    if (!free_.empty()) {
      bytes = std::move(free_.back());
      free_.pop_back();
    }
  }
  if (!bytes) {
    bytes.reset(static_cast<std::byte*>(std::aligned_alloc(kBufferAlignment, allocated_size_)));
    if (!bytes) throw std::bad_alloc();
  }
  // Zeroed outside the lock: a reused image must not show old entries.
  std::memset(bytes.get(), 0, allocated_size_);
  return PooledBuffer(this, std::move(bytes));
}

void BufferPool::shut() {
  {
    std::lock_guard lock(mu_);
    shut_ = true;
  }
  cv_.notify_all();
}

void BufferPool::release(AlignedBytes bytes) {
  {
    std::lock_guard lock(mu_);
    --out_;
    free_.push_back(std::move(bytes));
  }
  cv_.notify_one();
}

}  // namespace commitlog
