// SPDX-License-Identifier: Apache-2.0
// The inputs of the offline commands (dump, verify, replay, stat), checked
// before any output, so that bad input gives one line naming the file (and the
// offset where one applies) and exit code 2, never a crash or half a report.
//
// Input errors: a path that does not exist, a directory without segments, a
// file that is not a regular file, a segment-like name that does not parse,
// an intact header of a format version or with flags this build does not
// read, a file that cannot be read. A damaged header (bad magic or checksum,
// cut short, never written) is not an input error: it is damage of that
// segment, which the commands report.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "commitlog/position.h"
#include "segment/segment_reader.h"
#include "commitlog/status.h"

namespace commitlog::tools {

struct LogFile {
  uint64_t id = 0;    // from the file name; 0 for a file named otherwise
  std::string path;
  uint64_t size = 0;  // bytes
};

// The segments of a log directory, ordered by id, each with a header this
// build reads (or a damaged one). Fails with a one-line message otherwise.
Result<std::vector<LogFile>> open_log_directory(const std::string& dir);

// The segments named by `paths`: files as given, directories as their
// segments in id order. Fails with a one-line message at the first bad one.
Result<std::vector<LogFile>> open_log_paths(const std::vector<std::string>& paths);

// A segment file in memory, its header parsed: as much of it as its header
// allows (segment_read_limit()), only the header when that is damaged.
struct LoadedSegment {
  std::vector<std::byte> bytes;
  uint64_t file_size = 0;  // of which `bytes` holds the first
  HeaderProblem problem = HeaderProblem::kNone;  // never kUnknownVersion or kUnknownFlags
  SegmentHeader header;
};
Result<LoadedSegment> load_segment(const LogFile& file);

// "PATH: offset N: what is wrong" when `problem` is a header this build
// cannot read; empty when the header is fine or merely damaged.
std::string header_input_error(const std::string& path, HeaderProblem problem, const SegmentHeader& header);

// Total bytes of `files`, and each one's starting point in that total, for
// progress bars.
struct ByteOffsets {
  uint64_t total = 0;
  std::vector<uint64_t> start;  // parallel to the files
};
ByteOffsets byte_offsets(const std::vector<LogFile>& files);

// SEGMENT:OFFSET, as Position::to_string() prints it; nullopt for anything else.
std::optional<Position> parse_position(const std::string& s);

}  // namespace commitlog::tools
