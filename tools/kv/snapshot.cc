// SPDX-License-Identifier: Apache-2.0
#include "tools/kv/snapshot.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include <fmt/core.h>

#include "segment/checksum.h"
#include "tools/kv/mutation.h"

namespace commitlog::kv {
namespace {

constexpr std::string_view kMagic = "CLKVSNAP";
constexpr std::string_view kEndMagic = "CLKVEND1";
constexpr uint32_t kVersion = 1;
constexpr size_t kHeaderSize = 40;
constexpr size_t kTrailerSize = 16;
constexpr size_t kBlock = 1u << 20;

std::string snapshot_name(Position p) {
  return fmt::format("snapshot-{:020}-{:020}.kvs", p.segment, p.offset);
}

std::optional<Position> parse_name(std::string_view name) {
  unsigned long long segment = 0, offset = 0;
  char tail[8] = {};
  if (name.size() != snapshot_name({}).size()) return std::nullopt;
  const std::string copy(name);
  if (std::sscanf(copy.c_str(), "snapshot-%20llu-%20llu%4s", &segment, &offset, tail) != 3)
    return std::nullopt;
  if (std::string_view(tail) != ".kvs") return std::nullopt;
  return Position{segment, offset};
}

std::span<const std::byte> as_bytes(std::string_view s) {
  return std::as_bytes(std::span(s.data(), s.size()));
}

// Checksums and writes the file's contents block by block.
class BlockWriter {
 public:
  explicit BlockWriter(File& file) : file_(file) {}

  Status append(std::string_view bytes) {
    pending_.append(bytes);
    while (pending_.size() >= kBlock) CL_RETURN_IF_ERROR(emit(kBlock));
    return {};
  }
  // Writes the rest and the trailer.
  Status finish() {
    if (!pending_.empty()) CL_RETURN_IF_ERROR(emit(pending_.size()));
    std::string trailer(kTrailerSize, '\0');
    store_u64(reinterpret_cast<std::byte*>(trailer.data()), hash_);
    std::memcpy(trailer.data() + 8, kEndMagic.data(), 8);
    return file_.write_at(offset_, as_bytes(trailer));
  }

 private:
  Status emit(size_t n) {
    const std::string_view block(pending_.data(), n);
    hash_ = checksum(as_bytes(block), hash_);
    CL_RETURN_IF_ERROR(file_.write_at(offset_, as_bytes(block)));
    offset_ += n;
    pending_.erase(0, n);
    return {};
  }

  File& file_;
  std::string pending_;
  uint64_t offset_ = 0;
  uint64_t hash_ = 0;
};

// Checks a snapshot's framing and checksum, and counts its entries.
Status verify(std::string_view file, uint64_t* entries, std::string_view* body) {
  if (file.size() < kHeaderSize + kTrailerSize)
    return Status::corruption("shorter than header and trailer");
  if (file.substr(0, 8) != kMagic) return Status::corruption("bad magic");
  const auto* bytes = reinterpret_cast<const std::byte*>(file.data());
  if (load_u32(bytes + 8) != kVersion) {
    return Status::not_supported("snapshot version " + std::to_string(load_u32(bytes + 8)));
  }
  if (file.substr(file.size() - 8) != kEndMagic)
    return Status::corruption("bad trailer magic (torn file?)");
  const std::string_view covered = file.substr(0, file.size() - kTrailerSize);
  uint64_t hash = 0;
  for (size_t at = 0; at < covered.size(); at += kBlock) {
    hash = checksum(as_bytes(covered.substr(at, kBlock)), hash);
  }
  if (hash != load_u64(bytes + covered.size())) return Status::corruption("checksum mismatch");
  *entries = load_u64(bytes + 32);
  *body = covered.substr(kHeaderSize);
  return {};
}

// Walks the entries of `body`; `each` may be empty (a dry run).
Status walk(std::string_view body, uint64_t entries,
            const std::function<void(std::string_view, std::string_view)>& each) {
  size_t pos = 0;
  for (uint64_t i = 0; i < entries; ++i) {
    std::string_view kv[2];
    for (std::string_view& s : kv) {
      uint64_t length = 0;
      if (!get_varint(body, &pos, &length) || length > body.size() - pos) {
        return Status::corruption("entry " + std::to_string(i) + " is truncated");
      }
      s = body.substr(pos, length);
      pos += length;
    }
    if (each) each(kv[0], kv[1]);
  }
  return pos == body.size() ? Status{} : Status::corruption("bytes after the last entry");
}

}  // namespace

Result<std::string> write_snapshot(FileSystem& fs, const std::string& dir,
                                   const TableImage& image, uint32_t permissions) {
  const std::string path = dir + "/" + snapshot_name(image.position);
  const std::string tmp = path + ".tmp";
  if (fs.exists(tmp)) CL_RETURN_IF_ERROR(fs.remove(tmp));
  auto file = fs.open(tmp, OpenMode::kCreateNew, permissions);
  if (!file.ok()) return file.status();
  {
    BlockWriter writer(**file);
    std::string header(kHeaderSize, '\0');
    auto* h = reinterpret_cast<std::byte*>(header.data());
    std::memcpy(header.data(), kMagic.data(), 8);
    store_u32(h + 8, kVersion);
    store_u32(h + 12, 0);
    store_u64(h + 16, image.position.segment);
    store_u64(h + 24, image.position.offset);
    store_u64(h + 32, image.entries.size());
    CL_RETURN_IF_ERROR(writer.append(header));
    std::string entry;
    for (const auto& [key, value] : image.entries) {
      entry.clear();
      put_varint(key.size(), &entry);
      entry += key;
      put_varint(value.size(), &entry);
      entry += value;
      CL_RETURN_IF_ERROR(writer.append(entry));
    }
    CL_RETURN_IF_ERROR(writer.finish());
  }
  CL_RETURN_IF_ERROR((*file)->sync());
  file->reset();
  CL_RETURN_IF_ERROR(fs.rename(tmp, path));
  CL_RETURN_IF_ERROR(fs.sync_dir(dir));
  return path;
}

Result<std::optional<SnapshotInfo>> load_newest_snapshot(
    FileSystem& fs, const std::string& dir,
    const std::function<void(std::string_view key, std::string_view value)>& each,
    std::vector<std::string>* warnings) {
  if (!fs.exists(dir)) return std::optional<SnapshotInfo>();
  auto names = fs.list(dir);
  if (!names.ok()) return names.status();
  std::vector<std::pair<Position, std::string>> found;
  for (const std::string& name : *names) {
    if (auto position = parse_name(name)) found.emplace_back(*position, name);
  }
  std::sort(found.begin(), found.end(),
            [](const auto& a, const auto& b) { return a.first > b.first; });
  for (const auto& [position, name] : found) {
    const std::string path = dir + "/" + name;
    auto contents = read_whole_file(fs, path);
    if (!contents.ok()) {
      warnings->push_back(path + ": " + contents.status().to_string());
      continue;
    }
    const std::string_view file(reinterpret_cast<const char*>(contents->data()), contents->size());
    uint64_t entries = 0;
    std::string_view body;
    Status status = verify(file, &entries, &body);
    if (status.ok()) status = walk(body, entries, {});
    const auto* header = reinterpret_cast<const std::byte*>(file.data());
    if (status.ok() && Position{load_u64(header + 16), load_u64(header + 24)} != position) {
      status = Status::corruption("its header names another position than its file name");
    }
    if (!status.ok()) {
      warnings->push_back(path + ": passed over: " + status.to_string());
      continue;
    }
    CL_RETURN_IF_ERROR(walk(body, entries, each));
    return std::optional<SnapshotInfo>(SnapshotInfo{path, position, entries});
  }
  return std::optional<SnapshotInfo>();
}

Status remove_old_snapshots(FileSystem& fs, const std::string& dir, std::optional<Position> keep) {
  auto names = fs.list(dir);
  if (!names.ok()) return names.status();
  for (const std::string& name : *names) {
    const auto position = parse_name(name);
    const bool stale = (position && keep && *position < *keep) ||
                       (name.starts_with("snapshot-") && name.ends_with(".kvs.tmp"));
    if (stale) CL_RETURN_IF_ERROR(fs.remove(dir + "/" + name));
  }
  return {};
}

}  // namespace commitlog::kv
