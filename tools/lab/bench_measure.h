// SPDX-License-Identifier: Apache-2.0
// What `commitlog bench` measures besides counting: append latency in a
// log-linear histogram, and the process's CPU time, context switches and
// resident memory.
//
// Thread-safety: a LatencyHistogram belongs to one producer thread (the
// fibers of one thread may share it: recording never suspends). Merge the
// per-thread histograms once the producers have stopped. The free functions
// may be called from any thread.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace commitlog::tools {

// Counts of nanosecond values in buckets 1.6% wide (64 per power of two),
// exact below 64 ns, like HdrHistogram with two significant digits.
class LatencyHistogram {
 public:
  void record(uint64_t nanos);
  void merge(const LatencyHistogram& other);

  uint64_t count() const { return count_; }
  uint64_t max() const { return max_; }
  double mean() const;
  // The value at quantile `q` (0..1): the middle of its bucket, never above max().
  uint64_t quantile(double q) const;

 private:
  static constexpr unsigned kSubBits = 6;
  static constexpr unsigned kSub = 1u << kSubBits;
  static constexpr unsigned kBuckets = (64 - kSubBits + 1) * kSub;
  static unsigned bucket_of(uint64_t nanos);
  static uint64_t bucket_low(unsigned bucket);
  static uint64_t bucket_width(unsigned bucket);

  std::array<uint64_t, kBuckets> counts_{};
  uint64_t count_ = 0;
  uint64_t max_ = 0;
  long double sum_ = 0;
};

// getrusage(RUSAGE_SELF): every thread of the process, the log's and
// RocksDB's background threads included.
struct ProcessUsage {
  double user_us = 0;
  double sys_us = 0;
  uint64_t voluntary_switches = 0;
  uint64_t involuntary_switches = 0;
  uint64_t write_bytes = 0;  // /proc/self/io: bytes sent towards the device
  uint64_t context_switches() const { return voluntary_switches + involuntary_switches; }
};
ProcessUsage process_usage();
ProcessUsage operator-(const ProcessUsage& a, const ProcessUsage& b);

// The middle value, or the mean of the two middle ones for an even count;
// 0 for none. The median of repeated runs, which one outlier does not move.
double median(std::vector<double> values);

// Resident set size now, from /proc/self/statm; 0 if unreadable.
uint64_t resident_bytes();

}  // namespace commitlog::tools
