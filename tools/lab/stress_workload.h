// SPDX-License-Identifier: Apache-2.0
// The workload of `commitlog stress`, shared by the driver and `--check`: what
// mutation S of producer P is, what a replayed directory says about each
// producer, and what the acks file says about acknowledged mutations lost.
//
// Mutation S of producer P (S = 0, 1, 2, ... in order) has table P % 16 and
// the payload "p=<P> s=<S> " followed by L filler bytes, where
//   L = (P * 7919 + S * 104729) % max_size   and
//   filler byte i = 'a' + (P * 31 + S * 17 + i) % 26.
// A producer appends S + 1 only after S is acknowledged, so in log order each
// producer's mutations are 0, 1, 2, ... with no gap and no duplicate, across
// any number of killed and restarted runs.
//
// The acks file holds a line "run\n" as each run starts, and one line
// "<P> <S> <R>\n" per acknowledgement, appended in the order the
// acknowledgements happened. R is the count of the run's log rounds that put
// what they cover beyond a kill -9 (flushes; with mapped segments seals too),
// read after the append returned: round R + 1 may have been sealed before the
// append, but round R + 2 started after it, so once any line of the run shows
// R + 2, the log had kept that mutation, and a loss of it is a failure under
// any policy (AckReport::lost_kept). An acknowledged mutation that a
// later replay does not hold is lost; the next run then appends that S again,
// so a producer's S going back in the acks file marks a loss at a kill.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "commitlog/replayer.h"

namespace commitlog::tools::stress {

inline constexpr uint32_t kTables = 16;
inline constexpr uint64_t kDefaultMaxSize = 1000;
// The longest "p=<P> s=<S> " prefix: two 20-digit numbers and the text.
inline constexpr uint64_t kMaxPrefixSize = 48;

// The table and payload of mutation `s` of producer `p`. REQUIRES: max_size > 0.
uint32_t table_of(uint64_t p);
void make_payload(uint64_t p, uint64_t s, uint64_t max_size, std::string& out);

// What a replayed directory holds, producer by producer.
struct LogScan {
  ReplayReport replay;
  // next[P]: producer P's replayed S values are 0 .. next[P] - 1 when the
  // scan is clean; 0 for a producer never seen.
  std::vector<uint64_t> next;
  uint64_t mismatches = 0;  // payloads or tables not as the formula says
  uint64_t gaps = 0;        // a producer's S skipped ahead
  uint64_t duplicates = 0;  // a producer's S repeated or went back
  uint64_t newest_us = 0;   // latest append time of any replayed mutation
  std::vector<std::string> problems;  // the first few, one line each

  uint64_t producers() const;
  bool clean() const { return replay.status.ok() && mismatches == 0 && gaps == 0 && duplicates == 0; }
};

// Replays `dir` in strict mode and checks every mutation against the
// formula. A missing directory is an empty log. `keys`: of an encrypted log.
LogScan scan_log(const std::string& dir, uint64_t max_size, std::shared_ptr<const KeyProvider> keys = nullptr);

// What the acks file says, compared with a scan.
struct AckReport {
  Status status;             // an unreadable or malformed file
  uint64_t acks = 0;         // complete lines
  bool torn_last_line = false;  // the file ends inside a line (a kill during write(2))
  uint64_t lost_at_kills = 0;   // acknowledged, lost at a kill, appended again later
  uint64_t lost_at_end = 0;     // acknowledged and not in the log now
  uint64_t loss_events = 0;     // (producer, kill) pairs that lost something
  uint64_t max_lost_per_event = 0;
  uint64_t lost_kept = 0;  // of the lost, those two later rounds had kept (never allowed)
  std::vector<std::string> problems;  // the first few losses, one line each

  uint64_t lost() const { return lost_at_kills + lost_at_end; }
};

// Reads the acks file at `path` (a missing file holds no acks). `next` is
// LogScan::next of the directory the acks belong to.
AckReport analyze_acks(const std::string& path, std::span<const uint64_t> next);

// Drops a partial last line left by a kill during write(2), so the next run's
// lines start on a line of their own. Returns the bytes dropped.
Result<uint64_t> repair_acks_file(const std::string& path);

}  // namespace commitlog::tools::stress
