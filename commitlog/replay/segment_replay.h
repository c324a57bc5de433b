// SPDX-License-Identifier: Apache-2.0
// The replayer's two steps (commitlog/replayer.h): first the prologue of
// every segment file (its header and whether it holds data, which shows
// where each process's run of segments ends), then each segment in turn,
// read as far as its header allows (segment_read_limit()), its mutations
// delivered and its damage judged by the recovery mode.
//
// Not thread-safe; one replay at a time per object.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "commitlog/replayer.h"
#include "segment/codec.h"
#include "segment/segment_image.h"
#include "segment/segment_reader.h"

namespace commitlog {

// What the first bytes of a segment file say.
struct SegmentPrologue {
  SegmentFile file;
  HeaderProblem problem = HeaderProblem::kNone;
  SegmentHeader header;
  bool has_data = false;     // its first marker or compressed section is valid
  bool may_be_torn = false;  // no later segment of its run holds data
};
Result<SegmentPrologue> read_prologue(FileSystem& fs, const SegmentFile& file);
// The first segment_read_limit(header) bytes of `file` (all of a shorter
// one) into `*out`; returns the file's size. `header`: intact and bounded
// (decode_bounded_segment_header()).
Result<uint64_t> read_segment_bytes(FileSystem& fs, const SegmentFile& file, const SegmentHeader& header,
                                    std::vector<std::byte>* out);
// A segment file without a readable header, read a chunk at a time through
// `*buffer` as far as the largest plain segment file goes.
struct UnreadableSegment {
  uint64_t read = 0;         // bytes read
  uint64_t nonzero_end = 0;  // one past the last non-zero byte read, 0 when all were zero
};
Result<UnreadableSegment> scan_unreadable_segment(FileSystem& fs, const SegmentFile& file,
                                                  std::vector<std::byte>* buffer);
// Sets may_be_torn. A segment continues the previous one's run when its
// header names it; one whose header is unreadable is taken to continue it.
void mark_run_ends(std::vector<SegmentPrologue>& prologues);

class SegmentReplay {
 public:
  SegmentReplay(const ReplayOptions& options, const ReplayHandler& handler, ReplayReport& report)
      : options_(options), handler_(handler), report_(report) {}

  // Reads `p`'s file and delivers its intact mutations. Returns false when
  // the replay must stop (report().status or stopped_at says why).
  bool replay(const SegmentPrologue& p);

 private:
  // Damage as the mode judges it.
  struct Finding {
    uint64_t offset = 0;
    uint64_t bytes = 0;
    std::string kind;
    bool durable = false;
    uint64_t stored_from = UINT64_MAX, stored_to = 0;  // compressed: the damaged sections' file range
  };
  enum class Next { kGoOn, kEndSegment, kStop };

  Next judge(const SegmentPrologue& p, Finding f);
  // Adds the section damage that lies at or before image offset `upto` to `f`.
  void attach_sections(Finding& f, uint64_t upto);
  bool deliver(const SegmentPrologue& p, const SegmentEntry& entry);
  bool stop(const Status& status);
  // An encrypted segment that could not be opened: an error, or with
  // ReplayOptions::framing_only its sections' framing judged (sealed
  // entries' framing is judged by the walk, which then delivers nothing).
  bool unopened(const SegmentPrologue& p, const SegmentImage& image);

  const ReplayOptions& options_;
  const ReplayHandler& handler_;
  ReplayReport& report_;
  std::vector<std::byte> buffer_;  // the segment being replayed; reused for each
  std::span<const std::byte> data_;      // what is read of it: its file, or its image
  const SegmentImage* image_ = nullptr;  // of the segment being replayed, once loaded
  size_t next_section_damage_ = 0;       // in image_->damage: the first not reported yet
};

}  // namespace commitlog
