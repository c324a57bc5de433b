// SPDX-License-Identifier: Apache-2.0
// The acks file of `commitlog stress`: what the driver writes as appends are
// acknowledged and as it discards the log, and what `--check` and each
// restart read from it against a replayed directory (stress_workload.h).
//
// Each line is written with one write(2) (O_APPEND), so a kill -9 keeps
// every line whole but perhaps the last (repair_acks_file() cuts that off):
//   run\n                        as each run starts
//   <P> <S> <R> <seg>:<off>\n    per acknowledgement, in the order they happened
//   discard <seg>:<off>\n        before the run discards every table up to there
// <seg>:<off> is the position append() returned (older files' ack lines
// lack it: such an ack is checked by S alone). R is the count of the run's
// log rounds that put what they cover beyond a kill -9 (flushes; with mapped
// segments seals too), read after the append returned: round R + 1 may have
// been sealed before the append, but round R + 2 started after it, so once
// any line of the run shows R + 2, the log had kept that mutation, and a loss
// of it is a failure under any policy (AckReport::lost_kept).
//
// An acknowledged mutation the replay does not hold is lost, unless its
// position is at or below the highest discard line's (the discard point):
// the log was told that one is persisted elsewhere. A lost one is appended
// again by the next run, so a producer's S going back in the file marks a
// loss at a kill. A producer goes on above its highest acknowledged S at or
// below the discard point (AckReport::resume_at), so discarded mutations
// are never appended twice.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "commitlog/position.h"
#include "commitlog/status.h"
#include "tools/lab/stress_workload.h"

namespace commitlog::tools::stress {

// Room for the longest ack line: five 20-digit numbers, their separators
// and the newline.
inline constexpr size_t kMaxAckLineSize = 112;

// Writes all of `text` to `fd` with as few write(2) calls as the kernel
// allows: one for a line this short.
Status write_all(int fd, std::string_view text);

// "<P> <S> <R> <seg>:<off>\n" in `out`; returns its length.
size_t format_ack_line(char (&out)[kMaxAckLineSize], uint64_t p, uint64_t s, uint64_t rounds,
                       Position position);
// "discard <seg>:<off>\n".
std::string format_discard_line(Position up_to);

// The highest discard line's position in the acks file at `path`; nullopt
// when it has none (or does not exist). Read before scan_log(), which
// needs it.
Result<std::optional<Position>> read_discard_point(const std::string& path);

// What the acks file says, compared with a scan.
struct AckReport {
  Status status;                // an unreadable or malformed file
  uint64_t acks = 0;            // complete ack lines
  bool torn_last_line = false;  // the file ends inside a line (a kill during write(2))
  std::optional<Position> discard_point;
  uint64_t lost_at_kills = 0;  // acknowledged, lost at a kill, appended again later
  uint64_t lost_at_end = 0;    // acknowledged, above the discard point, not in the log now
  uint64_t discarded = 0;  // acknowledged at or below the discard point, not in the log (allowed)
  // In the log at a position before the one its last ack names: never
  // allowed (an entry replayed after its ack's position is one lost and
  // appended again, or a stale one, and counts in lost_at_kills).
  uint64_t misplaced = 0;
  uint64_t loss_events = 0;  // (producer, kill) pairs that lost something
  uint64_t max_lost_per_event = 0;
  uint64_t lost_kept = 0;  // of the lost, those two later rounds had kept (never allowed)
  // resume_at[P]: one above P's highest S acknowledged at or below the
  // discard point; 0 when none is.
  std::vector<uint64_t> resume_at;
  std::vector<std::string> problems;  // the first few losses, one line each

  uint64_t lost() const { return lost_at_kills + lost_at_end; }
};

// Reads the acks file at `path` (a missing file holds no acks) against
// `scan`, the replay of the directory the acks belong to, made with
// `discard_point` (read_discard_point() of the same file).
AckReport analyze_acks(const std::string& path, const LogScan& scan,
                       std::optional<Position> discard_point);

// Drops a partial last line left by a kill during write(2), so the next run's
// lines start on a line of their own. Returns the bytes dropped.
Result<uint64_t> repair_acks_file(const std::string& path);

}  // namespace commitlog::tools::stress
