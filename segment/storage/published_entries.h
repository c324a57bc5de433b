// SPDX-License-Identifier: Apache-2.0
// The sync thread's walk over a segment's entries as producers publish them
// (mapped_segment.h): it waits until every entry reserved below a seal's
// marker has its length stored, and learns on the way what the lifecycle
// and the metrics need of them -- the tables, how many entries, and how
// long seals waited for a producer -- so producers pay nothing for it.
//
// Thread-safety: the thread that runs the log's round only (seal()).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "commitlog/clock.h"

namespace commitlog {

// One table of a segment: the offset of its last entry there.
struct TableExtent {
  uint32_t table = 0;
  uint64_t last_offset = 0;
};

class PublishedEntries {
 public:
  // `image` is the segment's image, `first_entry` the offset of its first
  // entry; `clock` times the waits and must outlive this object.
  PublishedEntries(std::byte* image, uint64_t first_entry, const Clock& clock)
      : image_(image), published_(first_entry), clock_(clock) {}

  // Returns once every entry in [max(from, published()), end) is published;
  // `end` must be where an entry (or the marker after the last) begins.
  void wait_until(uint64_t from, uint64_t end);
  // Entries up to here are known published. (A seal moves it past its
  // marker with skip_to().)
  uint64_t published() const { return published_; }
  void skip_to(uint64_t offset) { published_ = offset; }

  // The tables of the entries walked so far, sorted by id.
  const std::vector<TableExtent>& tables() const { return tables_; }
  // Entries walked since the last call.
  uint64_t take_count() { return std::exchange(count_, 0); }
  // Walks since the last call that found a reserved entry not yet written
  // and waited for its producer, and how long they waited in all.
  struct Waits {
    uint64_t seals = 0;
    uint64_t nanos = 0;
  };
  Waits take_waits() { return std::exchange(waits_, {}); }

 private:
  void note_table(uint32_t table, uint64_t offset);

  std::byte* const image_;
  uint64_t published_;
  const Clock& clock_;
  std::vector<TableExtent> tables_;  // sorted by table
  size_t last_table_ = 0;            // index in tables_ of the table noted last
  uint64_t count_ = 0;
  Waits waits_;
};

}  // namespace commitlog
