// SPDX-License-Identifier: Apache-2.0
// The engines `commitlog bench` drives, behind one interface so that one
// producer loop measures them all:
//   commitlog  this library, under one sync policy (batch, group:10ms, ...);
//   raw        the simplest ideal group commit: records of a 16-byte header
//              plus the payload (116 bytes for 100-byte payloads) written to
//              one fallocated file, and whichever producer finds no sync
//              running does one fdatasync for everything written so far;
//   raw-overwrite  the same on a pre-written file (bench_raw_file.h);
//   raw-direct     each record padded to whole blocks and written with
//              O_DIRECT + O_DSYNC on a pre-written file, no fdatasync;
//   raw-direct-fdatasync  the same with an fdatasync after each O_DIRECT write;
//   rocksdb    Put(16-byte key, payload) with WriteOptions.sync = true, when
//              this binary was built with librocksdb (COMMITLOG_HAVE_ROCKSDB).
//
// Thread-safety: append() is called concurrently from every producer thread
// and fiber; syncs() from the measuring thread at any time.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "commitlog/options.h"
#include "commitlog/status.h"

namespace commitlog::tools {

struct FlushedBytes {
  uint64_t image = 0;  // what the log had to store (entries and markers)
  uint64_t file = 0;   // what that took in its files
};

// One engine variant, e.g. {"commitlog", "group", 10ms}.
struct EngineSpec {
  std::string engine;  // "commitlog", "rocksdb" or a raw reference: "raw", "raw-overwrite", ...
  std::string policy;  // commitlog only: a PolicyRegistry name
  Duration window{};   // commitlog only: group window or periodic period; 0 = base's
  std::string window_text;  // as given ("10ms"), for the label
  // commitlog only: "pooled" (every payload is copied into the segment's
  // image), "direct" (payloads of at least the point's size, and 4 KiB,
  // bypass it; see Options::direct_write_threshold), or "" (as the options say).
  std::string large_path;
  // commitlog only: "none", "lz4" (commitlog_compression), or "" (as the
  // options say).
  std::string compression;
  // commitlog only: "none", "aes" (encrypted segments: the options' keys,
  // or a random key of the run's own), or "" (as the options say).
  std::string encryption;
  // commitlog only: a commitlog_disk_access_mode value, or "" (as the
  // options say).
  std::string access_mode;
  // commitlog only: "new" (nothing is discarded, so every segment is a new
  // file, as while a log starts), or "recycled" or "" (each segment is
  // discarded as the next one begins, as by a store whose memtables flush,
  // so later segments are written over spare files).
  std::string segments;

  // "commitlog batch", "commitlog group:10ms", "commitlog batch direct",
  // "commitlog batch lz4 standard", "raw", "rocksdb".
  std::string label() const;
  // The policy column: "batch", "group:10ms"; "" for the references.
  std::string policy_label() const;
};

struct EngineSetup {
  std::string directory;     // fresh and empty; the engine's files go here
  uint64_t record_size = 0;  // payload bytes of every append
  int fibers = 1;            // producers per thread; 1: the threads append themselves
  Options base;              // commitlog: defaults or the --config file's
};

class BenchEngine {
 public:
  virtual ~BenchEngine() = default;
  // Appends `payload` for `producer` (its `seq`-th append) and returns when
  // the engine acknowledges it: once durable, except for the periodic policy.
  virtual Status append(uint64_t producer, uint64_t seq, std::span<const std::byte> payload) = 0;
  // fsync/fdatasync/msync rounds so far.
  virtual uint64_t syncs() const = 0;
  // Bytes flushed so far, for the compression ratio; zeros if not known.
  virtual FlushedBytes flushed_bytes() const { return {}; }
  // False when append() returns before the data is durable (periodic).
  virtual bool durable() const { return true; }
  // False when a waiting append blocks its whole thread, not just its fiber.
  virtual bool suspends_fibers() const { return true; }
  virtual Status close() = 0;
};

// Whether `engine` is compiled in; the names of those that are.
bool engine_available(const std::string& engine);
std::vector<std::string> available_engines();

Result<std::unique_ptr<BenchEngine>> open_engine(const EngineSpec& spec, const EngineSetup& setup);

// One factory per engine, each in its own file (bench_engines.cc holds the
// commitlog one and the dispatch).
// The options the commitlog engine opens `spec` with in `setup`.
Options commitlog_engine_options(const EngineSpec& spec, const EngineSetup& setup);
Result<std::unique_ptr<BenchEngine>> open_commitlog_engine(const EngineSpec& spec,
                                                           const EngineSetup& setup);
// `prewritten`: raw-overwrite, else raw.
Result<std::unique_ptr<BenchEngine>> open_raw_engine(const EngineSetup& setup, bool prewritten);
// `fdatasync`: raw-direct-fdatasync, else raw-direct.
Result<std::unique_ptr<BenchEngine>> open_raw_direct_engine(const EngineSetup& setup,
                                                            bool fdatasync);
Result<std::unique_ptr<BenchEngine>> open_rocksdb_engine(const EngineSetup& setup);

}  // namespace commitlog::tools
