// What one O_DIRECT 4 KiB write plus fdatasync costs on a pre-written file,
// by how the file was pre-written and which block each write goes to. For
// docs/performance.md (disk access modes): the log packs records, so it
// rewrites the block a flush ends in; raw-direct gives each record a block.
//
//   g++ -O2 -o /tmp/direct-write-cost scripts/direct-write-cost.cc
//   /tmp/direct-write-cost FILE PREWRITE STEP OPS
//     PREWRITE: buffered (4 KiB writes through the page cache, as the bench's
//               raw references), direct (1 MiB O_DIRECT writes, as the log's
//               segments), dropped (buffered, then POSIX_FADV_DONTNEED), or
//               read-back (direct, then the whole file read through the cache)
//     STEP:     bytes the write position advances per op (4096: a new block
//               each time; 120: a 100 B record with its header, as the log)
//   prints ops/s and CPU µs per op (user + system, getrusage)
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

int main(int argc, char** argv) {
  if (argc != 5) return std::fprintf(stderr, "usage: %s FILE buffered|direct|dropped|read-back STEP OPS\n", argv[0]), 2;
  const char* path = argv[1];
  const std::string prewrite = argv[2];
  const long step = std::atol(argv[3]), ops = std::atol(argv[4]);
  const size_t size = 64 << 20, chunk = 1 << 20;
  void* zeros = nullptr;
  if (posix_memalign(&zeros, 4096, chunk) != 0) return 1;
  std::memset(zeros, 0, chunk);
  unlink(path);
  const bool direct_prewrite = prewrite == "direct" || prewrite == "read-back";
  int fd = open(path, O_RDWR | O_CREAT | (direct_prewrite ? O_DIRECT : 0), 0600);
  if (fd < 0) return std::perror(path), 1;
  const size_t write_size = direct_prewrite ? chunk : 4096;
  for (size_t at = 0; at < size; at += write_size) {
    if (pwrite(fd, zeros, write_size, static_cast<off_t>(at)) != static_cast<ssize_t>(write_size)) return std::perror("pre-write"), 1;
  }
  if (fdatasync(fd) != 0) return std::perror("fdatasync"), 1;
  if (prewrite == "dropped") posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  close(fd);
  if (prewrite == "read-back") {
    fd = open(path, O_RDONLY);
    if (fd < 0) return std::perror(path), 1;
    while (read(fd, zeros, chunk) > 0) {
    }
    close(fd);
  }

  fd = open(path, O_RDWR | O_DIRECT);
  if (fd < 0) return std::perror(path), 1;
  void* block = nullptr;
  if (posix_memalign(&block, 4096, 4096) != 0) return 1;
  std::memset(block, 'x', 4096);
  rusage before{}, after{};
  getrusage(RUSAGE_SELF, &before);
  const auto start = std::chrono::steady_clock::now();
  for (long i = 0, position = 0; i < ops; ++i, position += step) {
    const off_t at = position / 4096 * 4096;
    if (pwrite(fd, block, 4096, at) != 4096 || fdatasync(fd) != 0) return std::perror("write"), 1;
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  getrusage(RUSAGE_SELF, &after);
  auto us = [](const timeval& t) { return t.tv_sec * 1e6 + t.tv_usec; };
  const double cpu = us(after.ru_utime) - us(before.ru_utime) + us(after.ru_stime) - us(before.ru_stime);
  std::printf("%s step %ld: %.0f ops/s, %.1f CPU us/op\n", prewrite.c_str(), step, ops / seconds, cpu / ops);
  close(fd);
  unlink(path);
}
