// SPDX-License-Identifier: Apache-2.0
// Public API. Follows a log while it is written: a live log directory, or a
// cdc_raw directory (commitlog/cdc_options.h) through its `_cdc.idx` files,
// yielding each mutation once it is durable, in log order, from a position.
//
// What is durable. A reader cannot see the writer's memory, only its files,
// so it hands out an entry only when the files prove it durable:
//  - a valid marker after the entry records a synced offset beyond it (each
//    marker says how far its segment was durable when it was sealed), or an
//    `_cdc.idx` file beside the segment gives an offset beyond it (the writer
//    publishes that after each sync);
//  - or the segment is finished: its idx says COMPLETED, or the next segment
//    of the same run holds data (a segment is flushed to its end marker
//    before the next one's first marker or section is written);
//  - or the writer's run has ended: a later segment begins a new run (a
//    writer restarted after a crash), past any segments whose header was
//    never written (the crash came while the writer made them). A crashed run's last sections are then
//    handed out as a replay would deliver them: up to its torn tail, which a
//    replay drops too.
// So in a live log directory the last flush before the writer falls quiet is
// handed out with the next marker (the next seal or sync), the next segment,
// or the next run; through cdc_raw, as soon as its idx file is rewritten.
//
// Positions. position() is where the next poll() reads on: every mutation of
// the segments below position().segment, and of that segment below
// position().offset, was handed out (or skipped by the table filter). After a
// segment is read to its end, the position is {id + 1, 0}. Saved and given
// back as TailOptions::from, it resumes with no duplicate and no gap.
//
// Gaps. A segment deleted before the tail read it (discarded by the writer,
// or deleted from cdc_raw by someone else) is an error naming it: the segment
// the position points into, or, in a log directory, the predecessor that a
// segment's header names. In cdc_raw, where only segments with CDC tables'
// mutations are linked, only the first kind is seen.
//
// Damage below what the files prove durable is corruption: poll() stops there
// with an error naming the file, offset and kind.
//
// Thread-safety: one thread at a time. The reader reads files only; it never
// writes or deletes.
#pragma once

// One clear message instead of a page of errors from C++20 library features.
#if __cplusplus < 202002L
#error "commitlog needs C++20: compile with -std=c++20 or later"
#else

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "commitlog/export.h"
#include "commitlog/file_system.h"
#include "commitlog/key_provider.h"
#include "commitlog/position.h"
#include "commitlog/replayer.h"
#include "commitlog/status.h"

namespace commitlog {

struct COMMITLOG_EXPORT TailOptions {
  Position from;                 // {0, 0}: from the oldest segment there
  std::vector<uint32_t> tables;  // hand out only these tables' mutations; empty: all
  FileSystem* file_system = posix_file_system();
  // The master keys of encrypted segments; one it cannot open is an error
  // naming the segment and the key id.
  std::shared_ptr<const KeyProvider> keys;
};

class COMMITLOG_EXPORT TailReader {
 public:
  // Reads nothing yet: a directory that does not exist yet holds nothing.
  TailReader(std::string directory, TailOptions options);
  ~TailReader();
  // A moved-from reader's poll() fails with kInvalidArgument; its
  // position() is {0, 0}.
  TailReader(TailReader&&) noexcept;
  TailReader& operator=(TailReader&&) noexcept;

  // Hands every mutation that is durable now, from position() on, to
  // `handler`, in log order; returns how many it handed out (0: nothing new
  // yet; poll again later). On an error (a gap, corruption, a file it cannot
  // read, the handler's own error, or kInvalidArgument for a starting
  // position past its segment's end or inside a segment newer than the
  // newest of a log directory) position() is that of the first
  // mutation not handed out, and a later poll() tries again from there.
  [[nodiscard]] Result<uint64_t> poll(const ReplayHandler& handler);
  Position position() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace commitlog

#endif  // C++20
