// SPDX-License-Identifier: Apache-2.0
#include "segment/storage/block_file.h"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <new>

#include "segment/storage/buffer_pool.h"

namespace commitlog {
namespace {

class BlockFile final : public File {
 public:
  BlockFile(std::unique_ptr<File> direct, uint64_t block_size) : file_(std::move(direct)), block_(block_size) {}

  Status allocate(uint64_t offset, uint64_t length) override {
    std::lock_guard lock(mu_);
    return write_blocks(offset, offset + length, false);
  }
  Result<std::byte*> map(uint64_t) override {
    return Status::invalid_argument("map of a file written in direct I/O blocks");
  }
  Status sync_mapped(uint64_t, uint64_t) override {
    return Status::invalid_argument("msync of a file written in direct I/O blocks");
  }
  Status write_at(uint64_t offset, std::span<const std::byte> data) override { return write(offset, data, false); }
  Status write_at_durable(uint64_t offset, std::span<const std::byte> data) override {
    return write(offset, data, true);
  }
  Result<size_t> read_at(uint64_t offset, std::span<std::byte> out) override {
    std::lock_guard lock(mu_);
    const size_t n = offset < size_ ? std::min<uint64_t>(out.size(), size_ - offset) : 0;
    if (n > 0) std::memcpy(out.data(), copy_.get() + offset, n);
    return n;
  }
  Status sync() override { return file_->sync(); }
  Result<uint64_t> size() override {
    std::lock_guard lock(mu_);
    return size_;
  }
  // To `size` rounded up to a block; the copy past `size` becomes zeros, as
  // a file that never held those bytes reads.
  Status truncate(uint64_t size) override {
    std::lock_guard lock(mu_);
    const uint64_t end = (size + block_ - 1) / block_ * block_;
    CL_RETURN_IF_ERROR(file_->truncate(end));
    if (size < capacity_) std::memset(copy_.get() + size, 0, capacity_ - size);
    size_ = end;
    return {};
  }

 private:
  Status write(uint64_t offset, std::span<const std::byte> data, bool durable) {
    std::lock_guard lock(mu_);
    reserve(offset + data.size());
    std::memcpy(copy_.get() + offset, data.data(), data.size());
    return write_blocks(offset, offset + data.size(), durable);
  }

  // Writes the blocks holding [from, to) from the copy. REQUIRES: mu_ held.
  Status write_blocks(uint64_t from, uint64_t to, bool durable) {
    reserve(to);
    const uint64_t start = from / block_ * block_;
    const uint64_t end = (to + block_ - 1) / block_ * block_;
    if (end <= start) return {};
    const std::span<const std::byte> blocks{copy_.get() + start, end - start};
    CL_RETURN_IF_ERROR(durable ? file_->write_at_durable(start, blocks) : file_->write_at(start, blocks));
    size_ = std::max(size_, end);
    return {};
  }

  // Grows the copy, zeroed, to hold `bytes` rounded up to a block, doubling.
  // REQUIRES: mu_ held.
  void reserve(uint64_t bytes) {
    const uint64_t needed = (bytes + block_ - 1) / block_ * block_;
    if (needed <= capacity_) return;
    const uint64_t capacity = std::max({needed, 2 * capacity_, uint64_t{kBufferAlignment}});
    AlignedBytes grown = allocate_image(capacity);
    if (!grown) throw std::bad_alloc();
    if (capacity_ > 0) std::memcpy(grown.get(), copy_.get(), capacity_);
    std::memset(grown.get() + capacity_, 0, capacity - capacity_);
    copy_ = std::move(grown);
    capacity_ = capacity;
  }

  const std::unique_ptr<File> file_;
  const uint64_t block_;
  std::mutex mu_;
  AlignedBytes copy_;      // guarded by mu_
  uint64_t capacity_ = 0;  // guarded by mu_
  uint64_t size_ = 0;      // guarded by mu_: the file's size
};

}  // namespace

std::unique_ptr<File> make_block_file(std::unique_ptr<File> direct, uint64_t block_size) {
  return std::make_unique<BlockFile>(std::move(direct), block_size);
}

}  // namespace commitlog
