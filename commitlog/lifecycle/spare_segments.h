// SPDX-License-Identifier: Apache-2.0
// Files kept to become segments again (recycling). A segment whose entries
// are all discarded is renamed CommitLog-<id>.spare instead of being
// deleted, and the allocator writes a later segment over it with its old
// bytes in place: the disk then takes each appended byte once (no zeros
// written first) into blocks already allocated (no extents for an
// fdatasync to convert). Format version 3 lets readers tell the old bytes
// from the new (segment/format.h).
//
// Only a file with one name is taken: one that CDC or an archive command
// linked elsewhere is still someone else's. A spare keeps its segment id in
// its name, so the next process's ids stay above it (next_segment_id()).
//
// Reuse is for plain segments written through a pooled image (access modes
// standard and direct): a mapped segment's image is the file, which must read
// zero where producers have yet to write, and a compressed segment's file
// grows with its sections. Without reuse the pool only parks the last, empty
// segment of a closing log (park()), and the next open removes it.
//
// Thread-safety: every member may be called from any thread.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "commitlog/file_system.h"

namespace commitlog {

class SpareSegments {
 public:
  // Spares kept at most: enough for the segments one discard frees at the
  // usual rates; beyond that, deleting gives the space back.
  static constexpr size_t kMaxSpares = 4;

  // The spares in `dir`: with `reuse`, up to kMaxSpares of those of
  // `file_size` bytes are kept; the others are left for trim(). With
  // `encrypted` (the log encrypts its segments), only spares whose header
  // says they were encrypted are kept: a spare's old bytes stay past the
  // new segment's data, and those of a plaintext one would stay readable.
  static Result<std::unique_ptr<SpareSegments>> open(FileSystem& fs, std::string dir, uint64_t file_size,
                                                     bool reuse, bool encrypted);

  // Removes the spares open() did not keep. Call once the log's first
  // segment is durable: until then a spare's name may be what keeps the
  // next ids above those handed out before.
  void trim();
  // Makes the finished segment `path` (`id`, `file_size` bytes, every entry
  // discarded) a spare: true when it is one now, false when the caller
  // should delete it (no reuse, the pool is full, another name holds the
  // file, or the rename failed). Durable with the caller's sync_dir().
  bool offer(const std::string& path, uint64_t id);
  // At close: the log's last segment, which holds no entry, becomes a spare
  // whether or not the pool would reuse it, so that it leaves no segment
  // behind and its id still counts. False when another name holds the file
  // or the rename failed: the segment stays. Durable with sync_dir().
  bool park(const std::string& path, uint64_t id);
  // The allocator: the path of a spare that is the caller's from now on
  // (to reuse or remove), or nullopt.
  std::optional<std::string> take();

  uint64_t bytes() const;  // of the spares kept
  size_t count() const;

 private:
  SpareSegments(FileSystem& fs, std::string dir, uint64_t file_size, bool reuse);
  bool rename_to_spare(const std::string& path, uint64_t id);

  FileSystem& fs_;
  const std::string dir_;
  const uint64_t file_size_;
  const bool reuse_;
  mutable std::mutex mu_;
  std::map<uint64_t, std::string> kept_;    // by id; guarded by mu_
  std::map<uint64_t, std::string> excess_;  // for trim(); guarded by mu_
};

}  // namespace commitlog
