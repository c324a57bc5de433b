// SPDX-License-Identifier: Apache-2.0
#include "tools/cli/log_input.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>

#include <fmt/core.h>

#include "commitlog/replayer.h"
#include "segment/format.h"
#include "segment/file_name.h"
#include "segment/segment_image.h"

namespace commitlog::tools {
namespace {

// An open file descriptor, closed on scope exit.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

Status errno_status(int err, const std::string& path, const char* what) {
  return Status(err == ENOENT ? ErrorCode::kNotFound : ErrorCode::kIoError,
                fmt::format("{}: {}: {}", path, what, std::strerror(err)));
}

// Reads up to out.size() bytes from the start of `fd`; how many were read.
Result<size_t> read_prefix(int fd, const std::string& path, std::span<std::byte> out) {
  size_t done = 0;
  while (done < out.size()) {
    const ssize_t n = ::pread(fd, out.data() + done, out.size() - done, static_cast<off_t>(done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno_status(errno, path, "cannot read");
    }
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  return done;
}

// Without blocking: a FIFO named like a segment would hang a plain open().
int open_for_reading(const std::string& path) { return ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK); }

// The size of a regular file; anything else is refused, naming it.
Result<uint64_t> file_size(int fd, const std::string& path) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return errno_status(errno, path, "cannot stat");
  if (S_ISDIR(st.st_mode)) return errno_status(EISDIR, path, "cannot read");
  if (!S_ISREG(st.st_mode)) return Status::invalid_argument(path + ": not a regular file");
  return static_cast<uint64_t>(st.st_size);
}

// Opens `path`, reads its header and returns it as a LogFile, or the input error.
Result<LogFile> check_segment_file(const std::string& path, uint64_t id) {
  Fd fd(open_for_reading(path));
  if (fd.get() < 0) return errno_status(errno, path, "cannot open");
  auto size = file_size(fd.get(), path);
  if (!size.ok()) return size.status();
  std::byte bytes[format::kHeaderSize] = {};
  auto got = read_prefix(fd.get(), path, bytes);
  if (!got.ok()) return got.status();
  SegmentHeader header;
  const HeaderProblem problem = decode_segment_header({bytes, *got}, &header);
  std::string error = header_input_error(path, problem, header);
  if (!error.empty()) return Status::invalid_argument(std::move(error));
  return LogFile{id, path, *size};
}

}  // namespace

std::string header_input_error(const std::string& path, HeaderProblem problem, const SegmentHeader& header) {
  switch (problem) {
    case HeaderProblem::kNone:
    case HeaderProblem::kAllZero:
    case HeaderProblem::kTooShort:
    case HeaderProblem::kNotASegment:
    case HeaderProblem::kBadChecksum:
    case HeaderProblem::kCapacityOutOfRange:
      return {};
    case HeaderProblem::kUnknownVersion:
      if (header.version == format::kFormatVersion) {
        return fmt::format("{}: offset {}: unexpected header size for segment format version {}", path,
                           format::kHeaderSizeOffset, header.version);
      }
      return fmt::format("{}: offset {}: unknown segment format version {} (this build reads versions {} to {})",
                         path, format::kHeaderVersionOffset, header.version, format::kOldestReadableVersion,
                         format::kFormatVersion);
    case HeaderProblem::kUnknownFlags:
      return fmt::format("{}: offset {}: unknown segment flags {:#x} (this build knows {:#x})", path,
                         format::kHeaderFlagsOffset, header.flags, format::kKnownFlags);
  }
  return fmt::format("{}: offset 0: {}", path, header_problem_name(problem));
}

Result<std::vector<LogFile>> open_log_directory(const std::string& dir) {
  auto listed = list_segment_files(*posix_file_system(), dir);
  if (!listed.ok()) return listed.status();
  if (listed->empty()) {
    // A log closed with nothing in it parks its last segment as a spare.
    auto names = posix_file_system()->list(dir);
    const bool spares = names.ok() && std::any_of(names->begin(), names->end(), [](const std::string& name) {
                          return parse_spare_file_name(name).has_value();
                        });
    return Status::invalid_argument(
        fmt::format("{}: no commit log segments (files named {}<version>-<id>{}){}", dir, format::kFilePrefix,
                    format::kFileSuffix,
                    spares ? "; its spare segment files are what a log closed with nothing to replay leaves" : ""));
  }
  std::vector<LogFile> files;
  for (const SegmentFile& f : *listed) {
    auto file = check_segment_file(f.path, f.id);
    if (!file.ok()) return file.status();
    files.push_back(std::move(file).value());
  }
  return files;
}

Result<std::vector<LogFile>> open_log_paths(const std::vector<std::string>& paths) {
  std::vector<LogFile> files;
  for (const std::string& path : paths) {
    std::error_code ec;
    const auto status = std::filesystem::status(path, ec);
    if (ec || !std::filesystem::exists(status)) {
      return Status::not_found(path + ": no such file or directory");
    }
    if (std::filesystem::is_directory(status)) {
      auto dir = open_log_directory(path);
      if (!dir.ok()) return dir.status();
      files.insert(files.end(), dir->begin(), dir->end());
      continue;
    }
    const std::string name = std::filesystem::path(path).filename().string();
    auto id = parse_segment_file_name(name);
    auto file = check_segment_file(path, id.ok() ? id->value_or(0) : 0);
    if (!file.ok()) return file.status();
    files.push_back(std::move(file).value());
  }
  return files;
}

Result<LoadedSegment> load_segment(const LogFile& file) {
  Fd fd(open_for_reading(file.path));
  if (fd.get() < 0) return errno_status(errno, file.path, "cannot open");
  auto size = file_size(fd.get(), file.path);
  if (!size.ok()) return size.status();
  LoadedSegment segment;
  segment.file_size = *size;
  segment.bytes.resize(std::min<uint64_t>(*size, format::kHeaderSize));
  auto got = read_prefix(fd.get(), file.path, segment.bytes);
  if (!got.ok()) return got.status();
  segment.bytes.resize(*got);
  segment.problem = decode_bounded_segment_header(segment.bytes, &segment.header);
  std::string error = header_input_error(file.path, segment.problem, segment.header);
  if (!error.empty()) return Status::invalid_argument(std::move(error));
  if (segment.problem != HeaderProblem::kNone) return segment;
  segment.bytes.resize(std::min(*size, segment_read_limit(segment.header)));
  got = read_prefix(fd.get(), file.path, segment.bytes);
  if (!got.ok()) return got.status();
  segment.bytes.resize(*got);
  return segment;
}

ByteOffsets byte_offsets(const std::vector<LogFile>& files) {
  ByteOffsets offsets;
  for (const LogFile& f : files) {
    offsets.start.push_back(offsets.total);
    offsets.total += f.size;
  }
  return offsets;
}

std::optional<Position> parse_position(const std::string& s) {
  const size_t colon = s.find(':');
  if (colon == std::string::npos) return std::nullopt;
  Position p;
  const char* end = s.data() + s.size();
  auto a = std::from_chars(s.data(), s.data() + colon, p.segment);
  auto b = std::from_chars(s.data() + colon + 1, end, p.offset);
  if (a.ec != std::errc() || a.ptr != s.data() + colon || b.ec != std::errc() || b.ptr != end ||
      colon == 0 || colon + 1 == s.size()) {
    return std::nullopt;
  }
  return p;
}

}  // namespace commitlog::tools
