// SPDX-License-Identifier: Apache-2.0
#include "segment/storage/buffer_pool.h"

#include <sys/mman.h>

#include <cstring>
#include <new>

namespace commitlog {

// A direct write pins every page it takes from the image, and the block
// layer hands the device one segment per run of physically contiguous
// memory. In 4 KiB pages a write of a MiB is 256 pins and, past the
// device's segment limit, more than one request; in 2 MiB pages it is one.
// That is most of what separated a lone producer of large payloads from the
// raw disk. The cost is at most 2 MiB of rounding per image.
AlignedBytes allocate_image(size_t size) {
  const size_t alignment = size < kHugePageSize ? kBufferAlignment : kHugePageSize;
  const size_t rounded = (size + alignment - 1) / alignment * alignment;  // as aligned_alloc requires
  AlignedBytes bytes(static_cast<std::byte*>(std::aligned_alloc(alignment, rounded)));
#ifdef MADV_HUGEPAGE
  // Advice: without transparent huge pages the image is in 4 KiB pages.
  if (bytes && alignment == kHugePageSize) ::madvise(bytes.get(), rounded, MADV_HUGEPAGE);
#endif
  return bytes;
}

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
    bytes = allocate_image(allocated_size_);
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
