// SPDX-License-Identifier: Apache-2.0
// One benchmark point: an engine, `threads` producer threads each running
// `fibers` producers (fibers == 1: the thread itself appends, no fiber is
// made), each appending `size`-byte payloads back to back.
//
// The point runs in three phases, switched by the measuring thread:
//   warm-up  starts once every producer has started, lasts `warmup`;
//   measure  lasts `duration`: appends that complete in it are counted and
//            their latency (around append(), so until durable for durable
//            engines) recorded; getrusage and the engine's sync count are
//            read at its start and end;
//   stop     each producer finishes the append it is in and returns.
// Producers record into a histogram per thread; nothing is shared on the
// hot path but the phase flag, which they only read.
#pragma once

#include <cstdint>
#include <string>

#include "tools/lab/bench_engines.h"
#include "tools/lab/bench_measure.h"
#include "tools/lab/bench_payload.h"

namespace commitlog::tools {

struct PointSpec {
  EngineSpec engine;
  int threads = 1;
  int fibers = 1;  // per thread
  uint64_t size = 100;
  PayloadKind payload = PayloadKind::kFill;
  uint64_t seed = 1;  // of the payloads
  Duration warmup = std::chrono::milliseconds(500);
  Duration duration = std::chrono::seconds(2);
  size_t fiber_stack = 16 * 1024;

  int producers() const { return threads * fibers; }
  // The same load (threads, fibers, size, payload), whatever the engine.
  bool same_shape(const PointSpec& o) const {
    return threads == o.threads && fibers == o.fibers && size == o.size && payload == o.payload;
  }
};

struct PointResult {
  PointSpec spec;
  double seconds = 0;        // measured interval
  uint64_t ops = 0;          // appends completed in it
  LatencyHistogram latency;  // of those appends, nanoseconds
  ProcessUsage usage;        // delta over the interval
  uint64_t syncs = 0;        // engine syncs in the interval
  FlushedBytes flushed;      // engine bytes flushed in the interval
  uint64_t rss_bytes = 0;    // at the end of the interval
  uint64_t rss_before = 0;   // before the producers started
  uint64_t errors = 0;       // failed appends (each stops its producer)
  std::string first_error;
  bool durable = true;  // the engine acknowledges only durable appends

  double ops_per_second() const { return seconds > 0 ? static_cast<double>(ops) / seconds : 0; }
  double mb_per_second() const { return ops_per_second() * static_cast<double>(spec.size) / 1e6; }
  double per_op(double total) const { return ops > 0 ? total / static_cast<double>(ops) : 0; }
  // Image bytes / file bytes flushed; 0 when the engine does not tell.
  double compression_ratio() const {
    return flushed.file == 0
               ? 0
               : static_cast<double>(flushed.image) / static_cast<double>(flushed.file);
  }
};

// Opens the engine in setup.directory (setup.record_size and setup.fibers
// are taken from `spec`), runs the point, closes the engine.
// Fails only if the engine cannot be opened or closed; append errors are
// counted in the result.
Result<PointResult> run_point(const PointSpec& spec, EngineSetup setup);

}  // namespace commitlog::tools
