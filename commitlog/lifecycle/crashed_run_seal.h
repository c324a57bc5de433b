// SPDX-License-Identifier: Apache-2.0
// Proves the tails that crashed runs left: when a log is opened, the newest
// data-bearing segment of each run whose writer died before sealing it (a
// version 2 segment without a seal, segment/segment_seal.h) is read, and
// where a replay in the default mode finds its data to end is written as its
// seal. From then on, damage before that point reads as corruption, never
// as the torn tail it would otherwise pass for.
//
// A segment with durable damage is not sealed: it is corrupt already, and
// its report is the operator's to read. Runs of the open log's owner only
// (the caller holds the directory's lock).
#pragma once

#include <string>

#include "commitlog/file_system.h"
#include "commitlog/key_provider.h"
#include "commitlog/status.h"

namespace commitlog {

// Seals the unsealed run ends of `dir`. Errors reading or writing a segment
// are returned; a segment that cannot be proved is left as it is.
// An encrypted segment it must read but cannot open with `keys` is an
// error naming the segment and the key id.
[[nodiscard]] Status seal_crashed_runs(FileSystem& fs, const std::string& dir, const KeyProvider* keys = nullptr);

}  // namespace commitlog
