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

#include "commitlog/file_system.h"
#include "segment/direct_io_probe.h"

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

  Result<uint64_t> volume_bytes(const std::string& dir) override {
    struct statvfs vfs {};
    if (::statvfs(dir.c_str(), &vfs) != 0) return Status::from_errno(errno, "statvfs " + dir);
    return static_cast<uint64_t>(vfs.f_blocks) * vfs.f_frsize;
  }
};

}  // namespace

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

Status File::truncate(uint64_t size) {
  return Status::not_supported("truncate to " + std::to_string(size) + " bytes: this file does not offer it");
}

Result<uint64_t> FileSystem::direct_io_block_size(const std::string& dir) {
  return Status::not_supported("direct I/O in " + dir + ": this file system does not offer it");
}

Status FileSystem::link(const std::string& from, const std::string& to) {
  return Status::not_supported("link " + from + " to " + to + ": this file system has no hard links");
}

Result<uint64_t> FileSystem::volume_bytes(const std::string& dir) {
  return Status::not_supported("the size of the volume of " + dir + ": this file system does not say");
}

FileSystem* posix_file_system() {
  static PosixFileSystem fs;
  return &fs;
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
