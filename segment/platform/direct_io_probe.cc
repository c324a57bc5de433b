// SPDX-License-Identifier: Apache-2.0
#include "segment/platform/direct_io_probe.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "segment/format.h"

namespace commitlog {
namespace {

constexpr uint64_t kMinBlock = format::kMinDirectBlock;
constexpr uint64_t kMaxBlock = format::kMaxDirectBlock;

Status unsupported(const std::string& dir, const std::string& why) {
  return Status::not_supported("direct I/O in " + dir + ": " + why);
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() { ::close(fd_); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  const int fd_;
};

Result<std::unique_ptr<Fd>> open_probe_file(const std::string& dir) {
  constexpr int kFlags = O_RDWR | O_DIRECT | O_CLOEXEC;
  int fd = ::open(dir.c_str(), O_TMPFILE | kFlags, 0600);
  int err = errno;
  // EISDIR: a kernel without O_TMPFILE; EOPNOTSUPP: a file system without it.
  if (fd < 0 && (err == EISDIR || err == EOPNOTSUPP)) {
    const std::string path = dir + "/.commitlog-direct-io-probe-" + std::to_string(::getpid());
    fd = ::open(path.c_str(), O_CREAT | O_EXCL | kFlags, 0600);
    err = errno;
    if (fd >= 0) ::unlink(path.c_str());
  }
  if (fd >= 0) return std::make_unique<Fd>(fd);
  if (err == EINVAL) return unsupported(dir, "its file system refuses O_DIRECT");
  return Status::from_errno(err, "open a direct I/O probe file in " + dir);
}

// The alignment statx reports (Linux 6.1 on, where the file system tells):
// 0 when it does not tell, and also 0 in `*refused` = true when it says
// the file cannot do direct I/O.
uint64_t reported_alignment(int fd, bool* refused) {
  *refused = false;
#ifdef STATX_DIOALIGN
  struct statx stx {};
  if (::statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &stx) != 0) return 0;
  if ((stx.stx_mask & STATX_DIOALIGN) == 0) return 0;
  *refused = stx.stx_dio_offset_align == 0;
  return std::max<uint64_t>(stx.stx_dio_offset_align, stx.stx_dio_mem_align);
#else
  (void)fd;
  return 0;
#endif
}

// The smallest block an O_DIRECT write at offset 0 takes, trying 4 KiB to
// 64 KiB; a write of a block smaller than the device's fails with EINVAL.
Result<uint64_t> written_alignment(int fd, const std::string& dir) {
  struct Free {
    void operator()(void* p) const { std::free(p); }
  };
  std::unique_ptr<void, Free> buffer(std::aligned_alloc(kMaxBlock, kMaxBlock));
  if (!buffer) return Status::from_errno(ENOMEM, "direct I/O probe in " + dir);
  std::memset(buffer.get(), 0, kMaxBlock);
  for (uint64_t block = kMinBlock; block <= kMaxBlock; block *= 2) {
    const ssize_t n = ::pwrite(fd, buffer.get(), block, 0);
    if (n == static_cast<ssize_t>(block)) return block;
    if (n < 0 && errno != EINVAL && errno != EINTR) {
      return Status::from_errno(errno, "direct I/O probe write in " + dir);
    }
  }
  return unsupported(dir, "no O_DIRECT write of a 4KiB to 64KiB block succeeded");
}

}  // namespace

Result<uint64_t> probe_direct_io_block_size(const std::string& dir) {
  struct statfs fs {};
  if (::statfs(dir.c_str(), &fs) != 0) return Status::from_errno(errno, "statfs " + dir);
  if (fs.f_type == TMPFS_MAGIC || fs.f_type == RAMFS_MAGIC) {
    return unsupported(dir,
                       "it is on tmpfs or ramfs, whose files live in memory with no device below");
  }
  auto file = open_probe_file(dir);
  if (!file.ok()) return file.status();
  bool refused = false;
  const uint64_t reported = reported_alignment((*file)->get(), &refused);
  if (refused) return unsupported(dir, "its file system refuses O_DIRECT on regular files");
  if (reported > 0) return std::max(kMinBlock, std::bit_ceil(reported));
  return written_alignment((*file)->get(), dir);
}

}  // namespace commitlog
