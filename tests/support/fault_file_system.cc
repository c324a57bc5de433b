// SPDX-License-Identifier: Apache-2.0
#include "tests/support/fault_file_system.h"

#include "tests/support/fault_node.h"
#include "tests/support/sanitizers.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>
#include <string>

namespace commitlog::testing {
namespace {

constexpr uint64_t kPageSize = 4096;

// "/a//b/" -> "/a/b"; "" -> ".".
std::string normalize(const std::string& path) {
  std::string out;
  for (char c : path) {
    if (c == '/' && !out.empty() && out.back() == '/') continue;
    out.push_back(c);
  }
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  return out.empty() ? "." : out;
}

std::string parent_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string base_name(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

const char* op_name(Op op) {
  switch (op) {
    case Op::kOpen: return "open";
    case Op::kAllocate: return "fallocate";
    case Op::kMap: return "mmap";
    case Op::kWrite: return "write";
    case Op::kSyncMapped: return "msync";
    case Op::kSync: return "fdatasync";
    case Op::kSyncDir: return "fsync directory";
    case Op::kRename: return "rename";
    case Op::kLink: return "link";
    case Op::kRemove: return "remove";
  }
  return "unknown";
}

class FaultFileSystem::FaultFile final : public File {
 public:
  FaultFile(FaultFileSystem& fs, std::shared_ptr<Node> node, std::string path, bool writable,
            bool direct = false)
      : fs_(fs), node_(std::move(node)), path_(std::move(path)), writable_(writable), direct_(direct) {}

  ~FaultFile() override {
    if (mapped_) {
      std::lock_guard lock(fs_.mu_);
      --node_->mappings;
    }
  }

  Status allocate(uint64_t offset, uint64_t length) override {
    std::lock_guard lock(fs_.mu_);
    CL_RETURN_IF_ERROR(fs_.check_locked(Op::kAllocate, "fallocate " + path_));
    if (!writable_) return Status::from_errno(EBADF, "fallocate " + path_);
    return grow_locked(offset + length, "fallocate ");
  }

  Result<std::byte*> map(uint64_t length) override {
    std::lock_guard lock(fs_.mu_);
    CL_RETURN_IF_ERROR(fs_.check_locked(Op::kMap, "mmap " + path_));
    if (!writable_) return Status::from_errno(EACCES, "mmap " + path_);
    if (mapped_) return Status::invalid_argument("map called twice on " + path_);
    if (direct_) return Status::invalid_argument("map of " + path_ + ", opened for direct I/O");
    if (length > node_->data.size()) {
      // A real mapping past the end of the file faults with SIGBUS on access.
      return Status::from_errno(EINVAL, "mmap " + path_ + " past the end of the file");
    }
    mapped_ = true;
    ++node_->mappings;
    return node_->data.data();
  }

  Status sync_mapped(uint64_t offset, uint64_t length) override {
    fs_.wait_while_held(Op::kSyncMapped);
    std::lock_guard lock(fs_.mu_);
    CL_RETURN_IF_ERROR(fs_.check_locked(Op::kSyncMapped, "msync " + path_));
    if (!mapped_) return Status::from_errno(ENOMEM, "msync " + path_ + " (not mapped)");
    Node& n = *node_;
    const uint64_t begin = offset & ~(kPageSize - 1);
    const uint64_t end = std::min<uint64_t>(offset + length, n.data.size());
    make_size_durable(n);
    // Only [begin, end) is read: the caller is done writing it, while other
    // threads may be storing past `end` through the mapping right now.
    if (begin < end) std::memcpy(n.durable.data() + begin, n.data.data() + begin, end - begin);
    return {};
  }

  void prefault_mapped(uint64_t offset, uint64_t length) override {
    std::lock_guard lock(fs_.mu_);
    fs_.prefaults_.push_back({path_, offset, length});
  }

  Status write_at(uint64_t offset, std::span<const std::byte> data) override {
    fs_.wait_while_held(Op::kWrite);
    std::lock_guard lock(fs_.mu_);
    return write_locked(offset, data, "write ");
  }

  Status write_at_durable(uint64_t offset, std::span<const std::byte> data) override {
    std::lock_guard lock(fs_.mu_);
    CL_RETURN_IF_ERROR(write_locked(offset, data, "write (dsync) "));
    Node& n = *node_;
    if (n.durable.size() < offset + data.size()) n.durable.resize(offset + data.size());
    if (!data.empty()) std::memcpy(n.durable.data() + offset, data.data(), data.size());
    return {};
  }

  Result<size_t> read_at(uint64_t offset, std::span<std::byte> out) override {
    std::lock_guard lock(fs_.mu_);
    if (direct_) CL_RETURN_IF_ERROR(check_aligned_locked(offset, out.size(), out.data(), "read "));
    const std::vector<std::byte>& data = node_->data;
    if (offset >= data.size()) return size_t{0};
    const size_t n = std::min<size_t>(out.size(), data.size() - offset);
    if (n > 0) {
      // A reader beside a live log (the tail reader) reads bytes that the
      // writer may be storing through its mapping right now, with no order
      // between the two, as pread() of a page being stored into does; it
      // may get them half stored, which its checksums catch. The copy stands
      // for the kernel's, which no sanitizer sees: it is left unchecked, and
      // only it.
      UncheckedAccessScope unchecked;
      std::memcpy(out.data(), data.data() + offset, n);
    }
    return n;
  }

  Status sync() override {
    fs_.wait_while_held(Op::kSync);
    std::lock_guard lock(fs_.mu_);
    CL_RETURN_IF_ERROR(fs_.check_locked(Op::kSync, "fdatasync " + path_));
    // Like fdatasync, this also writes back pages dirtied through a mapping;
    // unlike it, copying them races with a thread storing into the mapping.
    node_->durable = node_->data;
    return {};
  }

  Result<uint64_t> size() override {
    std::lock_guard lock(fs_.mu_);
    return static_cast<uint64_t>(node_->data.size());
  }

  // The new size is durable with the next sync, as the old one was until then.
  Status truncate(uint64_t size) override {
    std::lock_guard lock(fs_.mu_);
    if (fs_.plug_pulled_) return Status::from_errno(EIO, "ftruncate " + path_ + " (the power is off)");
    if (!writable_) return Status::from_errno(EINVAL, "ftruncate " + path_);
    if (size > node_->data.size()) return grow_locked(size, "ftruncate ");
    if (node_->mappings > 0) {
      return Status::from_errno(EINVAL, "ftruncate " + path_ + ": cannot shrink a mapped file in FaultFileSystem");
    }
    node_->data.resize(size);
    return {};
  }

 private:
  static void make_size_durable(Node& n) {
    if (n.durable.size() != n.data.size()) n.durable.resize(n.data.size());
  }

  // REQUIRES: fs_.mu_ held.
  Status write_locked(uint64_t offset, std::span<const std::byte> data, const char* what) {
    Status fault = fs_.check_locked(Op::kWrite, what + path_);
    if (!writable_) return fault.ok() ? Status::from_errno(EBADF, what + path_) : fault;
    if (direct_) CL_RETURN_IF_ERROR(check_aligned_locked(offset, data.size(), data.data(), what));
    if (!fault.ok()) {
      // A device that fails a direct write midway has written some of it;
      // with the power off, none.
      if (direct_ && !fs_.plug_pulled_) {
        const uint64_t block = fs_.direct_io_block_size_;
        store_locked(offset, data.first(data.size() / block / 2 * block)).ignore();
      }
      return fault;
    }
    return store_locked(offset, data);
  }

  // REQUIRES: fs_.mu_ held.
  Status store_locked(uint64_t offset, std::span<const std::byte> data) {
    const Status grown = grow_locked(offset + data.size(), "write ");
    // A full disk may have left room for a part: a short write.
    const std::vector<std::byte>& now = node_->data;
    size_t kept = grown.ok() ? data.size() : 0;
    if (grown.code() == ErrorCode::kNoSpace && offset < now.size()) kept = std::min(data.size(), now.size() - offset);
    if (kept > 0) std::memcpy(node_->data.data() + offset, data.data(), kept);
    return grown;
  }

  // EINVAL unless a direct transfer is aligned. REQUIRES: fs_.mu_ held.
  Status check_aligned_locked(uint64_t offset, uint64_t length, const void* buffer,
                              const char* what) const {
    const uint64_t block = fs_.direct_io_block_size_;
    const auto address = reinterpret_cast<uintptr_t>(buffer);
    if (offset % block == 0 && length % block == 0 && address % block == 0) return {};
    return Status::from_errno(
        EINVAL, what + path_ + ": offset " + std::to_string(offset) + ", length " +
                    std::to_string(length) + " or buffer address not aligned to the " +
                    std::to_string(block) + "-byte blocks of direct I/O");
  }

  // REQUIRES: fs_.mu_ held.
  Status grow_locked(uint64_t size, const char* what) {
    Node& n = *node_;
    if (size <= n.data.size()) return {};
    if (n.mappings > 0) {
      return Status::from_errno(EINVAL, what + path_ + ": cannot grow a mapped file in FaultFileSystem");
    }
    if (const uint64_t room = fs_.room_locked(); size - n.data.size() > room) {
      if (fs_.partial_growth_) {
        const uint64_t block = direct_ ? fs_.direct_io_block_size_ : kPageSize;
        n.data.resize(std::max<uint64_t>(n.data.size(), (n.data.size() + room) / block * block));
      }
      return Status::from_errno(ENOSPC, what + path_ + " (the disk is full)");
    }
    n.data.resize(size);
    return {};
  }

  FaultFileSystem& fs_;
  const std::shared_ptr<Node> node_;
  const std::string path_;
  const bool writable_;
  const bool direct_;
  bool mapped_ = false;
};

class FaultFileSystem::FaultLock final : public FileLock {
 public:
  FaultLock(FaultFileSystem& fs, std::string path) : FileLock(std::move(path)), fs_(fs) {}
  ~FaultLock() override {
    std::lock_guard lock(fs_.mu_);
    fs_.locked_.erase(normalize(path()));
  }

 private:
  FaultFileSystem& fs_;
};

FaultFileSystem::FaultFileSystem() { dirs_ = {{"/", 0755}, {".", 0755}}; }

FaultFileSystem::~FaultFileSystem() = default;

void FaultFileSystem::set_space_limit(std::optional<uint64_t> bytes, bool partial) {
  std::lock_guard lock(mu_);
  space_limit_ = bytes;
  partial_growth_ = partial;
}

uint64_t FaultFileSystem::room_locked() const {
  if (!space_limit_) return UINT64_MAX;
  std::set<const Node*> counted;  // a file under two names takes its room once
  uint64_t used = 0;
  for (const auto& [path, node] : files_) {
    if (counted.insert(node.get()).second) used += node->data.size();
  }
  return *space_limit_ > used ? *space_limit_ - used : 0;
}

Status FaultFileSystem::check_locked(Op op, const std::string& what) {
  const auto i = static_cast<size_t>(op);
  ++calls_[i];
  if (plug_pulled_) {
    ++failures_[i];
    return Status::from_errno(EIO, what + " (the power is off)");
  }
  Fault& fault = faults_[i];
  if (!fault.armed) return {};
  if (fault.successes_left > 0) {
    --fault.successes_left;
    return {};
  }
  ++failures_[i];
  const int error = fault.error;
  if (!fault.sticky) fault.armed = false;
  return Status::from_errno(error, what + " (injected fault)");
}

Result<std::unique_ptr<File>> FaultFileSystem::open(const std::string& raw_path, OpenMode mode,
                                                    uint32_t permissions) {
  const std::string path = normalize(raw_path);
  std::lock_guard lock(mu_);
  CL_RETURN_IF_ERROR(check_locked(Op::kOpen, "open " + path));
  if (dirs_.count(path) != 0) return Status::from_errno(EISDIR, "open " + path);
  auto it = files_.find(path);
  if (mode == OpenMode::kCreateNew) {
    if (it != files_.end()) return Status::from_errno(EEXIST, "open " + path);
    if (dirs_.count(parent_of(path)) == 0) return Status::from_errno(ENOENT, "open " + path);
    it = files_.emplace(path, std::make_shared<Node>()).first;
    it->second->permissions = permissions;
  } else if (it == files_.end()) {
    return Status::from_errno(ENOENT, "open " + path);
  }
  const bool writable = mode != OpenMode::kRead;
  const bool direct = mode == OpenMode::kReadWriteDirect;
  if (direct && direct_io_block_size_ == 0) {
    return Status::from_errno(EINVAL, "open " + path + " (direct I/O)");
  }
  return std::unique_ptr<File>(new FaultFile(*this, it->second, path, writable, direct));
}

Status FaultFileSystem::rename(const std::string& raw_from, const std::string& raw_to) {
  const std::string from = normalize(raw_from), to = normalize(raw_to);
  std::lock_guard lock(mu_);
  CL_RETURN_IF_ERROR(check_locked(Op::kRename, "rename " + from));
  auto it = files_.find(from);
  if (it == files_.end()) return Status::from_errno(ENOENT, "rename " + from);
  if (dirs_.count(parent_of(to)) == 0) return Status::from_errno(ENOENT, "rename " + from + " to " + to);
  if (dirs_.count(to) != 0) return Status::from_errno(EISDIR, "rename " + from + " to " + to);
  std::shared_ptr<Node> node = it->second;
  files_.erase(it);
  files_[to] = std::move(node);
  return {};
}

Status FaultFileSystem::link(const std::string& raw_from, const std::string& raw_to) {
  const std::string from = normalize(raw_from), to = normalize(raw_to);
  std::lock_guard lock(mu_);
  CL_RETURN_IF_ERROR(check_locked(Op::kLink, "link " + from));
  auto it = files_.find(from);
  if (it == files_.end()) return Status::from_errno(ENOENT, "link " + from);
  if (dirs_.count(parent_of(to)) == 0) return Status::from_errno(ENOENT, "link " + from + " to " + to);
  if (files_.count(to) != 0 || dirs_.count(to) != 0) return Status::from_errno(EEXIST, "link " + from + " to " + to);
  files_[to] = it->second;
  return {};
}

Result<uint64_t> FaultFileSystem::link_count(const std::string& raw_path) {
  const std::string path = normalize(raw_path);
  std::lock_guard lock(mu_);
  auto it = files_.find(path);
  if (it == files_.end()) return Status::from_errno(ENOENT, "stat " + path);
  uint64_t names = 0;
  for (const auto& [name, node] : files_) names += node == it->second ? 1 : 0;
  return names;
}

Result<uint64_t> FaultFileSystem::volume_bytes(const std::string& raw_dir) {
  const std::string dir = normalize(raw_dir);
  std::lock_guard lock(mu_);
  if (dirs_.count(dir) == 0) return Status::from_errno(ENOENT, "statvfs " + dir);
  return volume_bytes_;
}

void FaultFileSystem::set_volume_bytes(uint64_t bytes) {
  std::lock_guard lock(mu_);
  volume_bytes_ = bytes;
}

Result<std::unique_ptr<FileLock>> FaultFileSystem::lock(const std::string& raw_path, uint32_t /*permissions*/) {
  const std::string path = normalize(raw_path);
  std::lock_guard lock(mu_);
  if (dirs_.count(parent_of(path)) == 0) return Status::from_errno(ENOENT, "open lock file " + path);
  if (!locked_.insert(path).second) return Status::busy(path + ": locked by another holder");
  return std::unique_ptr<FileLock>(new FaultLock(*this, raw_path));
}

Result<std::optional<int64_t>> FaultFileSystem::lock_holder(const std::string& raw_path) {
  const std::string path = normalize(raw_path);
  std::lock_guard lock(mu_);
  if (locked_.count(path) == 0) return std::optional<int64_t>();
  return std::optional<int64_t>(::getpid());
}

Status FaultFileSystem::remove(const std::string& raw_path) {
  const std::string path = normalize(raw_path);
  std::lock_guard lock(mu_);
  CL_RETURN_IF_ERROR(check_locked(Op::kRemove, "remove " + path));
  if (files_.erase(path) == 0) return Status::from_errno(ENOENT, "remove " + path);
  return {};
}

Result<std::vector<std::string>> FaultFileSystem::list(const std::string& raw_dir) {
  const std::string dir = normalize(raw_dir);
  std::lock_guard lock(mu_);
  if (dirs_.count(dir) == 0) {
    return Status::from_errno(files_.count(dir) != 0 ? ENOTDIR : ENOENT, "list " + dir);
  }
  std::vector<std::string> names;
  for (const auto& [path, node] : files_) {
    if (parent_of(path) == dir) names.push_back(base_name(path));
  }
  for (const auto& [d, permissions] : dirs_) {
    if (d != dir && d != "/" && d != "." && parent_of(d) == dir) names.push_back(base_name(d));
  }
  return names;
}

Status FaultFileSystem::create_dirs(const std::string& raw_dir, uint32_t permissions) {
  const std::string dir = normalize(raw_dir);
  std::lock_guard lock(mu_);
  if (plug_pulled_) return Status::from_errno(EIO, "create directory " + dir + " (the power is off)");
  std::vector<std::string> chain;
  for (std::string d = dir; dirs_.count(d) == 0; d = parent_of(d)) {
    if (files_.count(d) != 0) return Status::from_errno(ENOTDIR, "create directory " + dir);
    chain.push_back(d);
  }
  for (const std::string& d : chain) dirs_.emplace(d, permissions);
  return {};
}

std::optional<uint32_t> FaultFileSystem::permissions(const std::string& raw_path) const {
  const std::string path = normalize(raw_path);
  std::lock_guard lock(mu_);
  if (auto file = files_.find(path); file != files_.end()) return file->second->permissions;
  if (auto dir = dirs_.find(path); dir != dirs_.end()) return dir->second;
  return std::nullopt;
}

Status FaultFileSystem::sync_dir(const std::string& raw_dir) {
  const std::string dir = normalize(raw_dir);
  std::lock_guard lock(mu_);
  CL_RETURN_IF_ERROR(check_locked(Op::kSyncDir, "fsync directory " + dir));
  if (dirs_.count(dir) == 0) return Status::from_errno(ENOENT, "open directory " + dir);
  std::erase_if(durable_, [&](const auto& entry) { return parent_of(entry.first) == dir; });
  for (const auto& [path, node] : files_) {
    if (parent_of(path) == dir) durable_[path] = node;
  }
  return {};
}

bool FaultFileSystem::exists(const std::string& raw_path) {
  const std::string path = normalize(raw_path);
  std::lock_guard lock(mu_);
  return files_.count(path) != 0 || dirs_.count(path) != 0;
}

bool FaultFileSystem::is_directory(const std::string& raw_path) {
  const std::string path = normalize(raw_path);
  std::lock_guard lock(mu_);
  return dirs_.count(path) != 0;
}

void FaultFileSystem::inject(Op op, int error, int after_calls, bool sticky) {
  std::lock_guard lock(mu_);
  faults_[static_cast<size_t>(op)] = Fault{true, error, std::max(after_calls, 0), sticky};
}

void FaultFileSystem::clear_fault(Op op) {
  std::lock_guard lock(mu_);
  faults_[static_cast<size_t>(op)] = Fault{};
}

void FaultFileSystem::clear_faults() {
  std::lock_guard lock(mu_);
  faults_.fill(Fault{});
}

uint64_t FaultFileSystem::calls(Op op) const {
  std::lock_guard lock(mu_);
  return calls_[static_cast<size_t>(op)];
}

uint64_t FaultFileSystem::failures(Op op) const {
  std::lock_guard lock(mu_);
  return failures_[static_cast<size_t>(op)];
}

std::vector<FaultFileSystem::Prefault> FaultFileSystem::prefaults() const {
  std::lock_guard lock(mu_);
  return prefaults_;
}

std::vector<std::string> FaultFileSystem::files() const {
  std::lock_guard lock(mu_);
  std::vector<std::string> out;
  for (const auto& entry : files_) out.push_back(entry.first);
  return out;
}

std::vector<std::string> FaultFileSystem::durable_files() const {
  std::lock_guard lock(mu_);
  std::vector<std::string> out;
  for (const auto& entry : durable_) out.push_back(entry.first);
  return out;
}

}  // namespace commitlog::testing

namespace commitlog::testing {

Result<uint64_t> FaultFileSystem::direct_io_block_size(const std::string& raw_dir) {
  const std::string dir = normalize(raw_dir);
  std::lock_guard lock(mu_);
  if (plug_pulled_) return Status::from_errno(EIO, "direct I/O probe in " + dir + " (the power is off)");
  if (dirs_.count(dir) == 0) return Status::from_errno(ENOENT, "statfs " + dir);
  if (direct_io_block_size_ == 0) {
    return Status::not_supported("direct I/O in " + dir + ": this file system refuses it");
  }
  return direct_io_block_size_;
}

void FaultFileSystem::set_direct_io_block_size(uint64_t block_size) {
  std::lock_guard lock(mu_);
  direct_io_block_size_ = block_size;
}

}  // namespace commitlog::testing
