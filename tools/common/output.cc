// SPDX-License-Identifier: Apache-2.0
#include "tools/common/output.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace commitlog::tools {
namespace {

constexpr size_t kBufferSize = 1u << 20;

}  // namespace

Result<std::unique_ptr<Output>> Output::open(const std::string& path) {
  if (path.empty() || path == "-") return std::unique_ptr<Output>(new Output(STDOUT_FILENO, "stdout", false));
  // A new file, or a device or FIFO (/dev/null, a pipe): never an existing
  // file's contents, which are not ours to overwrite.
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0 && errno == EEXIST) {
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      return Status::invalid_argument(path + " exists; give a new file (it is never overwritten)");
    }
    fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  }
  if (fd < 0) return Status::from_errno(errno, "open " + path);
  return std::unique_ptr<Output>(new Output(fd, path, true));
}

Result<std::unique_ptr<Output>> Output::open_for_append(const std::string& path) {
  if (path.empty() || path == "-") return open(path);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) return Status::from_errno(errno, "open " + path);
  return std::unique_ptr<Output>(new Output(fd, path, true));
}

Output::Output(int fd, std::string name, bool owned)
    : fd_(fd),
      name_(std::move(name)),
      owned_(owned),
      buffer_(new char[kBufferSize]),
      capacity_(kBufferSize) {}

Output::~Output() {
  flush().ignore();  // callers that care call flush() themselves
  if (owned_) ::close(fd_);
}

void Output::append(std::string_view s) {
  char* p = reserve(s.size());
  std::memcpy(p, s.data(), s.size());
  commit(p + s.size());
}

void Output::make_room(size_t n) {
  flush().ignore();  // the error is kept in error_ and returned by the next flush()
  if (capacity_ < n) {
    buffer_.reset(new char[n]);
    capacity_ = n;
  }
}

Status Output::flush() {
  const char* p = buffer_.get();
  size_t left = used_;
  used_ = 0;
  while (left > 0 && error_.ok()) {
    const ssize_t n = ::write(fd_, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      error_ = Status::from_errno(errno, "write " + name_);
      break;
    }
    p += n;
    left -= static_cast<size_t>(n);
    written_ += static_cast<uint64_t>(n);
  }
  return error_;
}

}  // namespace commitlog::tools
