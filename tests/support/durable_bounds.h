// SPDX-License-Identifier: Apache-2.0
// What the files of a live log directory prove durable, by the rules the
// tail follows (docs/tools.md, `commitlog tail`), worked out from the bytes
// on their own: a test's second opinion on what the tail writes out.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace commitlog::testing {

// Per segment id, the offset below which its mutations are durable: the
// largest synced offset of its valid markers, or for a compressed segment
// the image a later flush follows if that is more; UINT64_MAX for a segment
// closed cleanly or followed by a segment that holds data or begins a new
// run. Read while the writer is stopped, every mutation a tail wrote out
// before lies below its segment's bound. Segments without an intact header
// are left out.
std::map<uint64_t, uint64_t> durable_bounds(const std::string& dir);

}  // namespace commitlog::testing
