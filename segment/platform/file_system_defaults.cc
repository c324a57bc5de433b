// SPDX-License-Identifier: Apache-2.0
// The FileSystem and File interfaces' default implementations, shared by
// every file system (the POSIX one, the tests' fault-injecting one), and the
// helpers written on top of the interface.
#include <unistd.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <utility>

#include "commitlog/file_system.h"

namespace commitlog {

Status File::write_gathered_at(uint64_t offset, std::span<const std::span<const std::byte>> pieces) {
  for (const std::span<const std::byte> piece : pieces) {
    CL_RETURN_IF_ERROR(write_at(offset, piece));
    offset += piece.size();
  }
  return {};
}

Status File::write_at_durable(uint64_t offset, std::span<const std::byte> data) {
  CL_RETURN_IF_ERROR(write_at(offset, data));
  return sync();
}

Status File::write_filled_at(uint64_t offset, std::span<const std::byte> data, size_t piece,
                             const std::function<bool(size_t end)>& fill) {
  if (piece == 0) return Status::invalid_argument("a filled write in pieces of 0 bytes");
  for (size_t at = 0; at < data.size(); at += piece) {
    const size_t end = std::min(data.size(), at + piece);
    if (!fill(end)) return Status::io_error("a filled write stopped: its bytes could not be made");
    CL_RETURN_IF_ERROR(write_at(offset + at, data.subspan(at, end - at)));
  }
  return {};
}

Status File::truncate(uint64_t size) {
  return Status::not_supported("truncate to " + std::to_string(size) + " bytes: this file does not offer it");
}

Result<uint64_t> FileSystem::direct_io_block_size(const std::string& dir) {
  return Status::not_supported("direct I/O in " + dir + ": this file system does not offer it");
}

Status FileSystem::link(const std::string& from, const std::string& to) {
  return Status::not_supported("link " + from + " to " + to + ": this file system has no hard links");
}

Result<uint64_t> FileSystem::link_count(const std::string& path) {
  return Status::not_supported("link count of " + path + ": this file system has no hard links");
}

Result<uint64_t> FileSystem::volume_bytes(const std::string& dir) {
  return Status::not_supported("the size of the volume of " + dir + ": this file system does not say");
}

Result<uint32_t> FileSystem::permission_bits(const std::string& path) {
  return Status::not_supported("the permissions of " + path + ": this file system does not say");
}

namespace {

// The default lock(): the (file system, path) pairs locked in this process.
struct MemoryLocks {
  std::mutex mu;
  std::set<std::pair<const FileSystem*, std::string>> held;
};

MemoryLocks& memory_locks() {
  static MemoryLocks* const locks = new MemoryLocks;  // never destroyed: locks may outlive main()
  return *locks;
}

std::pair<const FileSystem*, std::string> memory_lock_key(const FileSystem* fs, const std::string& path) {
  return {fs, std::filesystem::path(path).lexically_normal().string()};
}

class MemoryFileLock final : public FileLock {
 public:
  MemoryFileLock(const FileSystem* fs, std::string path) : FileLock(std::move(path)), fs_(fs) {}
  ~MemoryFileLock() override {
    MemoryLocks& locks = memory_locks();
    std::lock_guard guard(locks.mu);
    locks.held.erase(memory_lock_key(fs_, path()));
  }

 private:
  const FileSystem* const fs_;
};

}  // namespace

Result<std::unique_ptr<FileLock>> FileSystem::lock(const std::string& path, uint32_t /*permissions*/) {
  MemoryLocks& locks = memory_locks();
  std::lock_guard guard(locks.mu);
  if (!locks.held.insert(memory_lock_key(this, path)).second) {
    return Status::busy(path + ": locked by another holder");
  }
  return std::unique_ptr<FileLock>(new MemoryFileLock(this, path));
}

Result<std::optional<int64_t>> FileSystem::lock_holder(const std::string& path) {
  MemoryLocks& locks = memory_locks();
  std::lock_guard guard(locks.mu);
  if (locks.held.count(memory_lock_key(this, path)) == 0) return std::optional<int64_t>();
  return std::optional<int64_t>(::getpid());
}
Result<std::vector<std::byte>> read_whole_file(FileSystem& fs, const std::string& path) {
  std::vector<std::byte> bytes;
  CL_RETURN_IF_ERROR(read_whole_file(fs, path, &bytes));
  return bytes;
}

Status read_whole_file(FileSystem& fs, const std::string& path, std::vector<std::byte>* out) {
  auto file = fs.open(path, OpenMode::kRead);
  if (!file.ok()) return file.status();
  auto size = (*file)->size();
  if (!size.ok()) return size.status();
  out->resize(*size);  // zero-fills only what grows past the previous size
  auto got = (*file)->read_at(0, *out);
  if (!got.ok()) return got.status();
  out->resize(*got);
  return {};
}

}  // namespace commitlog
