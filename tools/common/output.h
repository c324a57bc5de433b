// SPDX-License-Identifier: Apache-2.0
// Buffered output to stdout or a file, for commands that print one line per
// entry. Callers reserve room, write into it and commit; the buffer goes out
// in large write(2) calls. Errors are kept and returned by flush().
//
// Not thread-safe.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "commitlog/status.h"

namespace commitlog::tools {

class Output {
 public:
  // Opens `path` for writing: a new file (0600), or a device or FIFO; an
  // existing regular file is refused (kInvalidArgument naming it), never
  // overwritten. "-" or "" is stdout.
  static Result<std::unique_ptr<Output>> open(const std::string& path);
  // As open(), but an existing regular file is appended to: a resumed tail
  // continues the stream it wrote before.
  static Result<std::unique_ptr<Output>> open_for_append(const std::string& path);
  ~Output();
  Output(const Output&) = delete;
  Output& operator=(const Output&) = delete;

  // Room for at least `n` more bytes; write into it, then commit() what was used.
  char* reserve(size_t n) {
    if (capacity_ - used_ < n) make_room(n);
    return buffer_.get() + used_;
  }
  void commit(char* end) { used_ = static_cast<size_t>(end - buffer_.get()); }
  void append(std::string_view s);

  // Writes out everything buffered; the first error since opening, if any.
  Status flush();
  // True once a write has failed; flush() returns the error.
  bool failed() const { return !error_.ok(); }
  uint64_t bytes_written() const { return written_; }

 private:
  Output(int fd, std::string name, bool owned);
  void make_room(size_t n);

  int fd_;
  std::string name_;
  bool owned_;
  std::unique_ptr<char[]> buffer_;
  size_t capacity_;
  size_t used_ = 0;
  uint64_t written_ = 0;
  Status error_;
};

}  // namespace commitlog::tools
