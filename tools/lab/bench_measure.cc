// SPDX-License-Identifier: Apache-2.0
#include "tools/lab/bench_measure.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>

namespace commitlog::tools {

// Below 64 a bucket per value; above, bucket (e - 5) * 64 + s holds the
// values whose highest bit is e and whose next six bits are s.
unsigned LatencyHistogram::bucket_of(uint64_t nanos) {
  if (nanos < kSub) return static_cast<unsigned>(nanos);
  const unsigned e = 63u - static_cast<unsigned>(std::countl_zero(nanos));
  const unsigned sub = static_cast<unsigned>(nanos >> (e - kSubBits)) & (kSub - 1);
  return (e - kSubBits + 1) * kSub + sub;
}

uint64_t LatencyHistogram::bucket_low(unsigned bucket) {
  if (bucket < kSub) return bucket;
  const unsigned e = bucket / kSub + kSubBits - 1;
  return (uint64_t{kSub} + bucket % kSub) << (e - kSubBits);
}

uint64_t LatencyHistogram::bucket_width(unsigned bucket) {
  if (bucket < kSub) return 1;
  return uint64_t{1} << (bucket / kSub - 1);
}

void LatencyHistogram::record(uint64_t nanos) {
  ++counts_[bucket_of(nanos)];
  ++count_;
  max_ = std::max(max_, nanos);
  sum_ += static_cast<long double>(nanos);
}

void LatencyHistogram::merge(const LatencyHistogram& other) {
  for (unsigned i = 0; i < kBuckets; ++i) counts_[i] += other.counts_[i];
  count_ += other.count_;
  max_ = std::max(max_, other.max_);
  sum_ += other.sum_;
}

double LatencyHistogram::mean() const {
  return count_ == 0 ? 0.0 : static_cast<double>(sum_ / static_cast<long double>(count_));
}

uint64_t LatencyHistogram::quantile(double q) const {
  if (count_ == 0) return 0;
  const auto rank = std::max<uint64_t>(
      1, static_cast<uint64_t>(std::ceil(std::clamp(q, 0.0, 1.0) * static_cast<double>(count_))));
  uint64_t seen = 0;
  for (unsigned i = 0; i < kBuckets; ++i) {
    seen += counts_[i];
    if (seen >= rank) return std::min(max_, bucket_low(i) + bucket_width(i) / 2);
  }
  return max_;
}

namespace {

double micros(const timeval& tv) {
  return static_cast<double>(tv.tv_sec) * 1e6 + static_cast<double>(tv.tv_usec);
}

// write_bytes of /proc/self/io: bytes this process caused to be written to
// storage. The kernel counts a page (folio) when it turns dirty, so for a
// mapping it is what every sync makes the device write; 0 if unreadable.
uint64_t storage_write_bytes() {
  std::FILE* f = std::fopen("/proc/self/io", "r");
  if (f == nullptr) return 0;
  char line[128];
  unsigned long long value = 0;
  while (std::fgets(line, sizeof line, f) != nullptr) {
    if (std::sscanf(line, "write_bytes: %llu", &value) == 1) break;
  }
  std::fclose(f);
  return value;
}

}  // namespace

ProcessUsage process_usage() {
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  return {micros(ru.ru_utime), micros(ru.ru_stime), static_cast<uint64_t>(ru.ru_nvcsw),
          static_cast<uint64_t>(ru.ru_nivcsw), storage_write_bytes()};
}

ProcessUsage operator-(const ProcessUsage& a, const ProcessUsage& b) {
  return {a.user_us - b.user_us, a.sys_us - b.sys_us, a.voluntary_switches - b.voluntary_switches,
          a.involuntary_switches - b.involuntary_switches, a.write_bytes - b.write_bytes};
}

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t mid = values.size() / 2;
  return values.size() % 2 == 1 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

uint64_t resident_bytes() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  unsigned long long size = 0, resident = 0;
  const int n = std::fscanf(f, "%llu %llu", &size, &resident);
  std::fclose(f);
  if (n != 2) return 0;
  return resident * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
}

}  // namespace commitlog::tools
