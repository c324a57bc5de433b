// SPDX-License-Identifier: Apache-2.0
// The workload of `commitlog stress`, shared by the driver and `--check`: what
// mutation S of producer P is, and what a replayed directory says about each
// producer. stress_acks.h reads the acks file against it.
//
// Mutation S of producer P (S = 0, 1, 2, ... in order) has table P % 16 and
// the payload "p=<P> s=<S> " followed by L filler bytes, where
//   L = (P * 7919 + S * 104729) % max_size   and
//   filler byte i = 'a' + (P * 31 + S * 17 + i) % 26.
// A producer appends S + 1 only after S is acknowledged, so in log order each
// producer's mutations are 0, 1, 2, ... with no gap and no duplicate, across
// any number of killed and restarted runs; with discards, gaps where the log
// was discarded (scan_log()).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "commitlog/replayer.h"

namespace commitlog::tools::stress {

inline constexpr uint32_t kTables = 16;
inline constexpr uint64_t kDefaultMaxSize = 1000;
// The longest "p=<P> s=<S> " prefix: two 20-digit numbers and the text.
inline constexpr uint64_t kMaxPrefixSize = 48;

// More producers than this is a damaged payload or ack line.
inline constexpr uint64_t kMaxProducers = uint64_t{1} << 20;

// The table and payload of mutation `s` of producer `p`. REQUIRES: max_size > 0.
uint32_t table_of(uint64_t p);
void make_payload(uint64_t p, uint64_t s, uint64_t max_size, std::string& out);

// Reads `prefix`, a decimal number and `sep` from the front of `text`;
// false, with `text` in some state between, if it does not start so.
bool read_field(std::string_view& text, std::string_view prefix, char sep, uint64_t& value);
// Adds `line` to `problems` while they are fewer than ten.
void note(std::vector<std::string>& problems, std::string line);

// One replayed mutation of a producer: its S and where the log holds it.
struct ReplayedEntry {
  uint64_t s = 0;
  Position position;
};

// What a replayed directory holds, producer by producer.
struct LogScan {
  ReplayReport replay;
  // next[P]: one above producer P's highest replayed S; 0 for a producer
  // never seen. A clean scan without a discard point holds 0 .. next[P] - 1.
  std::vector<uint64_t> next;
  // entries[P]: producer P's replayed mutations, by S.
  std::vector<std::vector<ReplayedEntry>> entries;
  uint64_t mismatches = 0;  // payloads or tables not as the formula says
  uint64_t gaps = 0;        // a producer's S skipped ahead where nothing was discarded
  uint64_t duplicates = 0;  // a producer's S repeated or went back
  uint64_t newest_us = 0;   // latest append time of any replayed mutation
  std::vector<std::string> problems;  // the first few, one line each

  uint64_t producers() const;
  bool clean() const { return replay.status.ok() && mismatches == 0 && gaps == 0 && duplicates == 0; }
  // Producer p's mutation s, or nullptr when the log does not hold it.
  const ReplayedEntry* find(uint64_t p, uint64_t s) const;
};

// Replays `dir` in strict mode and checks every mutation against the
// formula. A missing directory is an empty log. `discarded`: the highest
// point the runs discarded the log up to (stress_acks.h); a producer's S may
// skip ahead after a mutation at or below it, or before its first one, as
// whole segments below it are deleted in any order. Without it, each
// producer's S values must be exactly 0, 1, 2, ... `keys`: of an encrypted log.
LogScan scan_log(const std::string& dir, uint64_t max_size, std::optional<Position> discarded = std::nullopt,
                 std::shared_ptr<const KeyProvider> keys = nullptr);

}  // namespace commitlog::tools::stress
