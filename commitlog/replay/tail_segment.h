// SPDX-License-Identifier: Apache-2.0
// One segment file as the tail reader (tail_reader.h) follows it while it is
// written: what of it is loaded, how far it is known to be durable, and the
// entries from a position up to that bound.
//
// A plain segment's bytes below the durable bound never change again, but a
// read that races the writer may have copied some of them before they
// landed: a direct flush is two writes (its whole blocks, then its last
// one), and a pwrite or a read copies page by page, so a read can find a
// section's marker new and the entries after it still old. So a byte counts
// as read (final) only once read after the bound covering it was known, and
// each refresh() reads from there on, until the chain of markers ends, then
// once more the range its new markers prove. A compressed segment is read
// whole at each refresh(): a flush's section headers are written after its
// bytes, once earlier flushes are durable.
//
// Lifetime: the File stays open while this object lives, so a segment deleted
// meanwhile can still be read to its end. Not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "commitlog/replayer.h"
#include "segment/codec.h"
#include "segment/segment_image.h"

namespace commitlog {

class TailSegment {
 public:
  // nullopt while the file's header is not written yet (the writer is
  // creating it); an error for a file that is not an intact segment, or
  // whose header gives a capacity no writer makes.
  // `keys`: the master keys of an encrypted segment, which must outlive it.
  static Result<std::optional<TailSegment>> open(FileSystem& fs, const SegmentFile& file,
                                                 const KeyProvider* keys = nullptr);

  uint64_t id() const { return file_.id; }
  const std::string& path() const { return file_.path; }
  const SegmentHeader& header() const { return header_; }

  // Reads what was written since the last call. Afterwards durable_bound()
  // is the largest offset that a valid marker's synced offset, or for a
  // compressed segment a later flush, proves durable. `known`: an offset the
  // writer published as durable (a CDC index), read before this call.
  [[nodiscard]] Status refresh(uint64_t known = 0);
  uint64_t durable_bound() const { return bound_; }

  // How the entries are bounded.
  enum class Bound {
    kDurable,   // below the durable bound (max of durable_bound() and `known`)
    kFinished,  // all of them: the segment is finished and durable
    kRunEnded,  // all that a replay delivers: its writer's run has ended
  };
  // What deliver() found.
  struct Delivery {
    uint64_t next = 0;   // the offset to read on from
    bool done = false;   // the segment holds nothing more
    Status status;       // corruption below the bound, the handler's error, or
                         // kInvalidArgument: `from` lies past a finished segment's data
  };
  // Calls `handler` with each entry from `from` on, as `bound` allows.
  // `known` is a durable offset published by the writer (a CDC index).
  Delivery deliver(uint64_t from, Bound bound, uint64_t known, const std::vector<uint32_t>& tables,
                   const ReplayHandler& handler);

 private:
  TailSegment(std::unique_ptr<File> file, SegmentFile name, SegmentHeader header, const KeyProvider* keys);
  bool compressed() const { return (header_.flags & format::kFlagLz4Sections) != 0; }
  // Follows the markers from walk_at_ through `bytes`; false if it stopped
  // because bytes ran out.
  bool walk(std::span<const std::byte> bytes);
  [[nodiscard]] Status load_plain_until_walk_ends(uint64_t known);
  // Plain: reads [final_, to) again, so that it is final.
  [[nodiscard]] Status reread_until(uint64_t to);
  [[nodiscard]] Status load_whole();
  [[nodiscard]] Status read_whole_file_handle();

  std::unique_ptr<File> handle_;
  SegmentFile file_;
  const KeyProvider* keys_ = nullptr;
  SegmentHeader header_;
  // Plain: the file up to its capacity, valid below loaded_; compressed: the file.
  std::vector<std::byte> bytes_;
  uint64_t loaded_ = 0;
  uint64_t final_ = 0;            // plain: bytes_ below it were read after they were proven whole
  // Compressed: rebuilt by each refresh(). Sealed entries: holds the data key.
  SegmentImage image_;
  uint64_t walk_at_;  // the first marker slot not yet walked
  uint64_t bound_;
  bool whole_ = false;  // plain: loaded to the end of the file
};

}  // namespace commitlog
