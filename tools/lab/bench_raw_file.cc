// SPDX-License-Identifier: Apache-2.0
#include "tools/lab/bench_raw_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <vector>

#include "segment/checksum.h"

namespace commitlog::tools {
namespace {

// In 4 KiB writes, as fio lays out a file for 4 KiB blocks: from larger
// ones the page cache builds large folios, and then every fdatasync after a
// small write writes the whole folio back (1 MiB per 100 B record).
Status write_zeros(int fd, uint64_t bytes, const std::string& path) {
  const std::vector<char> zeros(4096, 0);
  for (uint64_t at = 0; at < bytes;) {
    const size_t chunk = std::min<uint64_t>(zeros.size(), bytes - at);
    const ssize_t n = ::pwrite(fd, zeros.data(), chunk, static_cast<off_t>(at));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::from_errno(errno, "write zeros to " + path);
    at += static_cast<uint64_t>(n);
  }
  return {};
}

}  // namespace

void encode_raw_header(std::byte* out, std::span<const std::byte> payload, uint64_t seq) {
  store_u32(out, static_cast<uint32_t>(payload.size()));
  store_u32(out + 4, static_cast<uint32_t>(checksum(payload)));
  store_u64(out + 8, seq);
}

uint64_t ring_bytes(uint64_t record_bytes) {
  const uint64_t records =
      std::max<uint64_t>(16, ((64ull << 20) + record_bytes - 1) / record_bytes);
  return records * record_bytes;
}

Result<int> create_raw_file(const std::string& path, uint64_t bytes, bool prewritten,
                            int extra_flags) {
  const int created = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (created < 0) return Status::from_errno(errno, "open " + path);
  Status status = prewritten ? write_zeros(created, bytes, path) : Status{};
  if (const int err = prewritten ? 0 : ::posix_fallocate(created, 0, static_cast<off_t>(bytes))) {
    status = Status::from_errno(err, "fallocate " + path);
  }
  // The file's size and blocks must be durable before any append is.
  if (status.ok() && ::fsync(created) != 0) status = Status::from_errno(errno, "fsync " + path);
  ::close(created);
  CL_RETURN_IF_ERROR(status);
  const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC | extra_flags);
  if (fd < 0) return Status::from_errno(errno, "open " + path);
  return fd;
}

}  // namespace commitlog::tools
