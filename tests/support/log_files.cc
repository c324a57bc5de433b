// SPDX-License-Identifier: Apache-2.0
#include "tests/support/log_files.h"

#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <stdexcept>

namespace commitlog::testing {

std::vector<SegmentFile> segment_files(const std::string& dir) {
  auto files = list_segment_files(*posix_file_system(), dir);
  if (!files.ok()) throw std::runtime_error(files.status().to_string());
  return *files;
}

std::vector<std::byte> read_file(const std::string& path) {
  auto bytes = read_whole_file(*posix_file_system(), path);
  if (!bytes.ok()) throw std::runtime_error(bytes.status().to_string());
  return *bytes;
}

void write_file(const std::string& path, const std::vector<std::byte>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path);
}

void flip_bit(const std::string& path, uint64_t offset, int bit) {
  auto bytes = read_file(path);
  if (offset >= bytes.size()) throw std::runtime_error("flip_bit past the end of " + path);
  bytes[offset] ^= std::byte(1u << bit);
  write_file(path, bytes);
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + path);
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::unique_ptr<CommitLog> open_log(const Options& options) {
  auto log = CommitLog::open(options);
  REQUIRE_MESSAGE(log.ok(), log.status().to_string());
  return std::move(log).value();
}

std::vector<uint64_t> seeds(uint64_t base, int runs) {
  if (const char* s = std::getenv("COMMITLOG_SEED"); s != nullptr && *s != '\0') return {std::strtoull(s, nullptr, 0)};
  std::vector<uint64_t> out;
  for (int i = 0; i < runs; ++i) out.push_back(base + static_cast<uint64_t>(i));
  return out;
}

Options batch_options(const std::string& dir, uint64_t segment_size, Compression compression,
                      uint64_t direct_write_threshold) {
  Options o;
  o.directory = dir;
  o.sync_policy = "batch";
  o.segment_size = segment_size;
  o.compression = compression;
  o.direct_write_threshold = direct_write_threshold;
  return o;
}

Replayed replay_all(const std::string& dir, RecoveryMode mode) {
  return replay_all(*posix_file_system(), dir, mode);
}

Replayed replay_all(FileSystem& fs, const std::string& dir, RecoveryMode mode) {
  ReplayOptions options;
  options.file_system = &fs;
  options.mode = mode;
  return replay_with(dir, options);
}

Replayed replay_with(const std::string& dir, const ReplayOptions& options) {
  Replayed out;
  out.report = replay_directory(dir, options, [&](const ReplayedMutation& m) {
    out.payloads.emplace_back(reinterpret_cast<const char*>(m.payload.data()), m.payload.size());
    out.positions.push_back(m.position);
    out.tables.push_back(m.table);
    return Status{};
  });
  return out;
}

}  // namespace commitlog::testing
