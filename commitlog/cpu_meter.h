// How busy this process keeps the machine's CPUs: the process's CPU time
// (user + system, all threads) over wall time times the CPUs it may run on.
// The adaptive policy reads it to tell producers bound by the CPU from
// producers bound by the disk (docs/adaptive.md).
//
// Thread-safety: one thread (the sync thread) calls sample().
#pragma once

#include "policies/sync_policy.h"

namespace commitlog {

class CpuMeter {
 public:
  CpuMeter();

  // The share (0 to 1) of the usable CPUs the process used since the
  // previous sample (or construction), as a moving average over about the
  // last four samples. Spans shorter than 1 ms are merged into the next one
  // (the call then returns the average unchanged and makes no system call),
  // so one quick sample cannot swing it.
  double sample(TimePoint now);

 private:
  int cpus_;
  TimePoint since_;
  double cpu_seconds_since_;
  double busy_ = 0;
};

}  // namespace commitlog
