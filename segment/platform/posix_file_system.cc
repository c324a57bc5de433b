// SPDX-License-Identifier: Apache-2.0
#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <string_view>
#include <utility>

#include "commitlog/file_system.h"
#include "segment/platform/async_direct_writes.h"
#include "segment/platform/direct_io_probe.h"

namespace commitlog {
namespace {

uint64_t page_size() {
  static const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  return page;
}

class PosixFile final : public File {
 public:
  PosixFile(int fd, std::string path, bool direct = false)
      : fd_(fd), path_(std::move(path)), direct_(direct) {}
  ~PosixFile() override {
    if (mapping_ != nullptr) ::munmap(mapping_, mapped_length_);
    ::close(fd_);
  }

  Status allocate(uint64_t offset, uint64_t length) override {
    int err = ::posix_fallocate(fd_, static_cast<off_t>(offset), static_cast<off_t>(length));
    if (err != 0) return Status::from_errno(err, "fallocate " + path_);
    return {};
  }

  Result<std::byte*> map(uint64_t length) override {
    if (mapping_ != nullptr) return Status::invalid_argument("map called twice on " + path_);
    if (direct_) return Status::invalid_argument("map of " + path_ + ", opened for direct I/O");
    // MAP_POPULATE reads the (unwritten, so zero) pages in here, on the
    // allocator's thread, so producers take only a write fault on first touch.
    void* p = ::mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd_, 0);
    if (p == MAP_FAILED) return Status::from_errno(errno, "mmap " + path_);
    mapping_ = static_cast<std::byte*>(p);
    mapped_length_ = length;
    return mapping_;
  }

  Status sync_mapped(uint64_t offset, uint64_t length) override {
    const uint64_t page = page_size();
    uint64_t start = offset & ~(page - 1);
    if (::msync(mapping_ + start, offset + length - start, MS_SYNC) != 0) {
      return Status::from_errno(errno, "msync " + path_);
    }
    return {};
  }

  void prefault_mapped(uint64_t offset, uint64_t length) override {
    const uint64_t page = page_size();
    const uint64_t start = (offset + page - 1) & ~(page - 1);
    const uint64_t end = std::min(offset + length, mapped_length_) & ~(page - 1);
    if (mapping_ == nullptr || start >= end) return;
    // EINVAL before Linux 5.14: then producers take the faults, as without it.
    (void)::madvise(mapping_ + start, end - start, MADV_POPULATE_WRITE);
  }

  Status write_at(uint64_t offset, std::span<const std::byte> data) override {
    return write_gathered_at(offset, {&data, 1});
  }

  Status write_gathered_at(uint64_t offset, std::span<const std::span<const std::byte>> pieces) override {
    constexpr size_t kBatch = 16;  // iovecs per call; a flush gathers two
    size_t first = 0, done = 0;    // pieces[first] is written up to `done`
    while (first < pieces.size()) {
      iovec iov[kBatch];
      int count = 0;
      for (size_t i = first; i < pieces.size() && count < static_cast<int>(kBatch); ++i, ++count) {
        const size_t skip = i == first ? done : 0;
        iov[count] = {const_cast<std::byte*>(pieces[i].data()) + skip, pieces[i].size() - skip};
      }
      ssize_t n = ::pwritev(fd_, iov, count, static_cast<off_t>(offset));
      if (n < 0) {
        if (errno == EINTR) continue;
        return Status::from_errno(errno, "write " + path_);
      }
      offset += static_cast<uint64_t>(n);
      auto left = static_cast<size_t>(n);
      const size_t before = first;
      while (first < pieces.size() && left >= pieces[first].size() - done) {
        left -= pieces[first].size() - done;
        ++first;
        done = 0;
      }
      done += left;
      if (n == 0 && first == before) return Status::io_error("write " + path_ + ": no byte written");
    }
    return {};
  }

  Status write_at_durable(uint64_t offset, std::span<const std::byte> data) override {
    while (!data.empty()) {
      iovec iov{const_cast<std::byte*>(data.data()), data.size()};
      // Each part written is durable when the call returns, a short one too.
      ssize_t n = ::pwritev2(fd_, &iov, 1, static_cast<off_t>(offset), RWF_DSYNC);
      if (n < 0) {
        if (errno == EINTR) continue;
        return Status::from_errno(errno, "write (dsync) " + path_);
      }
      data = data.subspan(static_cast<size_t>(n));
      offset += static_cast<uint64_t>(n);
    }
    return {};
  }

  // Buffered writes are copies into the page cache: nothing to overlap.
  Status write_filled_at(uint64_t offset, std::span<const std::byte> data, size_t piece,
                         const std::function<bool(size_t end)>& fill) override {
    if (direct_) {
      if (auto written = write_filled_async(fd_, path_, offset, data, piece, fill)) return *written;
    }
    return File::write_filled_at(offset, data, piece, fill);
  }

  Result<size_t> read_at(uint64_t offset, std::span<std::byte> out) override {
    size_t done = 0;
    while (done < out.size()) {
      ssize_t n = ::pread(fd_, out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
      if (n < 0) {
        if (errno == EINTR) continue;
        return Status::from_errno(errno, "read " + path_);
      }
      if (n == 0) break;
      done += static_cast<size_t>(n);
    }
    return done;
  }

  Status sync() override {
    if (::fdatasync(fd_) != 0) return Status::from_errno(errno, "fdatasync " + path_);
    return {};
  }

  Result<uint64_t> size() override {
    struct stat st {};
    if (::fstat(fd_, &st) != 0) return Status::from_errno(errno, "stat " + path_);
    return static_cast<uint64_t>(st.st_size);
  }

  Status truncate(uint64_t size) override {
    if (::ftruncate(fd_, static_cast<off_t>(size)) != 0) return Status::from_errno(errno, "ftruncate " + path_);
    return {};
  }

 private:
  int fd_;
  std::string path_;
  const bool direct_;
  std::byte* mapping_ = nullptr;
  uint64_t mapped_length_ = 0;
};

// The lock is the open file description's: closing the descriptor, or the
// process ending, releases it.
class PosixFileLock final : public FileLock {
 public:
  PosixFileLock(int fd, std::string path) : FileLock(std::move(path)), fd_(fd) {}
  ~PosixFileLock() override { ::close(fd_); }

 private:
  const int fd_;
};

// A whole-file write lock, as F_OFD_SETLK takes it and F_OFD_GETLK tests it.
struct flock whole_file_write_lock() {
  struct flock lock {};
  lock.l_type = F_WRLCK;
  lock.l_whence = SEEK_SET;
  lock.l_start = 0;
  lock.l_len = 0;  // to the end, however far the file grows
  lock.l_pid = 0;  // required of the OFD commands
  return lock;
}

// The process id a lock file names: its leading decimal digits; 0 for none.
int64_t pid_in(std::string_view text) {
  int64_t pid = 0;
  for (char c : text) {
    if (c < '0' || c > '9' || pid > (int64_t{1} << 40)) break;
    pid = pid * 10 + (c - '0');
  }
  return pid;
}

class PosixFileSystem final : public FileSystem {
 public:
  using FileSystem::create_dirs;
  using FileSystem::open;

  Result<std::unique_ptr<File>> open(const std::string& path, OpenMode mode,
                                     uint32_t permissions) override {
    // O_NONBLOCK: opening a FIFO or a device named like a segment must not
    // hang; it is refused below. On a regular file the flag changes nothing.
    int flags = O_CLOEXEC | O_NONBLOCK;
    switch (mode) {
      case OpenMode::kRead: flags |= O_RDONLY; break;
      case OpenMode::kCreateNew: flags |= O_RDWR | O_CREAT | O_EXCL; break;
      case OpenMode::kReadWrite: flags |= O_RDWR; break;
      case OpenMode::kReadWriteDirect: flags |= O_RDWR | O_DIRECT; break;
    }
    int fd = ::open(path.c_str(), flags, static_cast<mode_t>(permissions));
    if (fd < 0) return Status::from_errno(errno, "open " + path);
    auto file = std::unique_ptr<File>(new PosixFile(fd, path, mode == OpenMode::kReadWriteDirect));
    struct stat st {};
    if (::fstat(fd, &st) != 0) return Status::from_errno(errno, "stat " + path);
    if (!S_ISREG(st.st_mode)) return Status::invalid_argument(path + ": not a regular file");
    if (::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0) {
      return Status::from_errno(errno, "fcntl " + path);
    }
    return file;
  }

  Status rename(const std::string& from, const std::string& to) override {
    if (::rename(from.c_str(), to.c_str()) != 0) return Status::from_errno(errno, "rename " + from);
    return {};
  }

  Status remove(const std::string& path) override {
    if (::unlink(path.c_str()) != 0) return Status::from_errno(errno, "remove " + path);
    return {};
  }

  Result<std::vector<std::string>> list(const std::string& dir) override {
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) return Status::from_errno(errno, "list " + dir);
    std::vector<std::string> names;
    while (struct dirent* e = ::readdir(d)) {
      std::string name = e->d_name;
      if (name != "." && name != "..") names.push_back(std::move(name));
    }
    ::closedir(d);
    return names;
  }

  Status create_dirs(const std::string& dir, uint32_t permissions) override {
    // Parents first, each made by mkdir(2) with the mode given, so no
    // directory of ours is ever wider than asked, even for an instant.
    const std::filesystem::path target = std::filesystem::path(dir).lexically_normal();
    std::filesystem::path prefix;
    for (const std::filesystem::path& part : target) {
      prefix /= part;
      if (part.empty() || part == "/" || part == "." || part == "..") continue;
      if (::mkdir(prefix.c_str(), static_cast<mode_t>(permissions)) == 0 || errno == EEXIST) {
        continue;
      }
      return Status::from_errno(errno, "create directory " + prefix.string());
    }
    if (!is_directory(dir)) return Status::io_error("create directory " + dir + ": not a directory");
    return {};
  }

  Status sync_dir(const std::string& dir) override {
    int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return Status::from_errno(errno, "open directory " + dir);
    int rc = ::fsync(fd);
    int err = errno;
    ::close(fd);
    if (rc != 0) return Status::from_errno(err, "fsync directory " + dir);
    return {};
  }

  bool exists(const std::string& path) override {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0;
  }

  bool is_directory(const std::string& path) override {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
  }

  Result<uint64_t> direct_io_block_size(const std::string& dir) override {
    return probe_direct_io_block_size(dir);
  }

  Status link(const std::string& from, const std::string& to) override {
    if (::link(from.c_str(), to.c_str()) != 0) return Status::from_errno(errno, "link " + from + " to " + to);
    return {};
  }

  Result<uint64_t> link_count(const std::string& path) override {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return Status::from_errno(errno, "stat " + path);
    return static_cast<uint64_t>(st.st_nlink);
  }

  Result<uint64_t> volume_bytes(const std::string& dir) override {
    struct statvfs vfs {};
    if (::statvfs(dir.c_str(), &vfs) != 0) return Status::from_errno(errno, "statvfs " + dir);
    return static_cast<uint64_t>(vfs.f_blocks) * vfs.f_frsize;
  }

  Result<uint32_t> permission_bits(const std::string& path) override {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return Status::from_errno(errno, "stat " + path);
    return static_cast<uint32_t>(st.st_mode & 07777);
  }

  using FileSystem::lock;

  Result<std::unique_ptr<FileLock>> lock(const std::string& path, uint32_t permissions) override {
    // O_NONBLOCK: a FIFO in the lock file's place must not hang the open.
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NONBLOCK,
                          static_cast<mode_t>(permissions));
    if (fd < 0) return Status::from_errno(errno, "open lock file " + path);
    auto held = std::make_unique<PosixFileLock>(fd, path);  // closes fd on every return
    struct stat st {};
    if (::fstat(fd, &st) != 0) return Status::from_errno(errno, "stat " + path);
    if (!S_ISREG(st.st_mode)) return Status::invalid_argument(path + ": not a regular file");
    struct flock request = whole_file_write_lock();
    if (::fcntl(fd, F_OFD_SETLK, &request) != 0) {
      if (errno == EAGAIN || errno == EACCES) return Status::busy(path + ": locked by another holder");
      return Status::from_errno(errno, "lock " + path);
    }
    // The new id over the old one, then the rest cut off: a reader between
    // the two still finds one whole id before the newline.
    const std::string pid = std::to_string(::getpid()) + "\n";
    size_t done = 0;
    while (done < pid.size()) {
      const ssize_t n = ::pwrite(fd, pid.data() + done, pid.size() - done, static_cast<off_t>(done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return Status::from_errno(n < 0 ? errno : EIO, "write " + path);
      done += static_cast<size_t>(n);
    }
    if (::ftruncate(fd, static_cast<off_t>(pid.size())) != 0) {
      return Status::from_errno(errno, "truncate " + path);
    }
    return std::unique_ptr<FileLock>(std::move(held));
  }

  Result<std::optional<int64_t>> lock_holder(const std::string& path) override {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
      if (errno == ENOENT) return std::optional<int64_t>();
      return Status::from_errno(errno, "open lock file " + path);
    }
    // A descriptor of its own, so that even a lock() of this process
    // conflicts with the test. It takes no lock, so closing it frees none.
    struct flock probe = whole_file_write_lock();
    const int rc = ::fcntl(fd, F_OFD_GETLK, &probe);
    const int err = errno;
    char text[32];
    const ssize_t n = rc == 0 && probe.l_type != F_UNLCK ? ::pread(fd, text, sizeof text, 0) : 0;
    ::close(fd);
    if (rc != 0) return Status::from_errno(err, "test lock " + path);
    if (probe.l_type == F_UNLCK) return std::optional<int64_t>();
    int64_t pid = n > 0 ? pid_in(std::string_view(text, static_cast<size_t>(n))) : 0;
    // A classic POSIX lock (not ours) carries its holder's id; OFD locks carry -1.
    if (pid == 0 && probe.l_pid > 0) pid = probe.l_pid;
    return std::optional<int64_t>(pid);
  }
};

}  // namespace

FileSystem* posix_file_system() {
  static PosixFileSystem fs;
  return &fs;
}

}  // namespace commitlog
