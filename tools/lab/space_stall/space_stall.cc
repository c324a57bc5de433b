// SPDX-License-Identifier: Apache-2.0
// commitlog-space-stall: how appends stall when the log runs into its hard
// size limit (docs/lifecycle.md has the figures). Producers append at an
// offered rate; a simulated embedder answers each flush request by
// "flushing" for --flush-ms and then discarding the requested tables up to
// where they were when the flush started. Prints append latencies, the
// longest stall, and the log's size and back-pressure counters.
//
//   commitlog-space-stall [--dir D] [--seconds 5] [--producers 4] [--rate-mib 40]
//                         [--segment-kib 1024] [--hard-limit-mib 16]
//                         [--max-delay-ms 10] [--flush-ms 400] [--tables 4]
// --hard-limit-mib 0 runs without a hard limit (soft limit 75% of 16 MiB).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <fmt/core.h>

#include "commitlog/commit_log.h"

namespace {

using namespace commitlog;
using WallTimer = std::chrono::steady_clock;

struct Args {
  std::string dir = "/tmp/commitlog-space-stall";
  double seconds = 5;
  int producers = 4;
  double rate_mib = 40;
  uint64_t segment_kib = 1024;
  uint64_t hard_limit_mib = 16;
  double max_delay_ms = 10;
  int flush_ms = 400;
  uint32_t tables = 4;
};

bool parse(int argc, char** argv, Args* a) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i];
    const char* v = argv[i + 1];
    if (key == "--dir") a->dir = v;
    else if (key == "--seconds") a->seconds = std::atof(v);
    else if (key == "--producers") a->producers = std::atoi(v);
    else if (key == "--rate-mib") a->rate_mib = std::atof(v);
    else if (key == "--segment-kib") a->segment_kib = std::strtoull(v, nullptr, 10);
    else if (key == "--hard-limit-mib") a->hard_limit_mib = std::strtoull(v, nullptr, 10);
    else if (key == "--max-delay-ms") a->max_delay_ms = std::atof(v);
    else if (key == "--flush-ms") a->flush_ms = std::atoi(v);
    else if (key == "--tables") a->tables = static_cast<uint32_t>(std::atoi(v));
    else return false;
  }
  return argc % 2 == 1;
}

// The embedder: one flush at a time, each taking flush_ms, then a discard of
// every requested table up to its position when the flush started.
class Embedder {
 public:
  Embedder(int flush_ms, uint32_t tables) : flush_ms_(flush_ms), last_(tables) {}
  void attach(CommitLog* log) { log_ = log; }
  void appended(uint32_t table, Position p) {
    std::lock_guard lock(mu_);
    last_[table] = std::max(last_[table], p);
  }
  void request(std::vector<uint32_t> tables) {
    std::lock_guard lock(mu_);
    for (uint32_t t : tables) pending_.insert(t);
    cv_.notify_one();
  }
  void run(const std::atomic<bool>& stop) {
    std::unique_lock lock(mu_);
    while (!stop) {
      if (pending_.empty()) {
        cv_.wait_for(lock, std::chrono::milliseconds(10));
        continue;
      }
      std::map<uint32_t, Position> snapshot;
      for (uint32_t t : pending_) snapshot[t] = last_[t];
      pending_.clear();
      lock.unlock();
      std::this_thread::sleep_for(std::chrono::milliseconds(flush_ms_));
      for (const auto& [t, p] : snapshot) log_->discard(t, p).ignore();
      ++flushes_;
      lock.lock();
    }
  }
  uint64_t flushes() const { return flushes_; }

 private:
  const int flush_ms_;
  CommitLog* log_ = nullptr;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Position> last_;
  std::set<uint32_t> pending_;
  std::atomic<uint64_t> flushes_{0};
};

double percentile(std::vector<uint32_t>& v, double q) {
  if (v.empty()) return 0;
  const size_t k = std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return v[k] / 1000.0;  // µs
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  if (!parse(argc, argv, &a)) {
    std::fprintf(stderr, "usage: see the comment at the top of tools/lab/space_stall/space_stall.cc\n");
    return 2;
  }
  std::filesystem::remove_all(a.dir);
  Embedder embedder(a.flush_ms, a.tables);
  Options options;
  options.directory = a.dir;
  options.sync_policy = "periodic";
  options.segment_size = a.segment_kib << 10;
  options.total_space_hard_limit = a.hard_limit_mib << 20;
  options.total_space_max_delay = std::chrono::microseconds(static_cast<int64_t>(a.max_delay_ms * 1000));
  if (a.hard_limit_mib == 0) options.total_space = 12 << 20;
  options.on_flush_request = [&](std::vector<uint32_t> tables) { embedder.request(std::move(tables)); };
  auto opened = CommitLog::open(options);
  if (!opened.ok()) {
    std::fprintf(stderr, "%s\n", opened.status().to_string().c_str());
    return 1;
  }
  CommitLog& log = **opened;
  embedder.attach(&log);

  std::atomic<bool> stop{false};
  std::thread flusher([&] { embedder.run(stop); });
  std::atomic<uint64_t> max_bytes{0};
  std::thread sampler([&] {
    while (!stop) {
      max_bytes = std::max<uint64_t>(max_bytes, log.metrics().total_log_bytes);
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });

  const std::string payload(1024, 'x');
  const double per_producer = a.rate_mib * (1 << 20) / 1024 / a.producers;  // appends/s
  const auto interval = std::chrono::nanoseconds(static_cast<int64_t>(1e9 / per_producer));
  std::vector<std::vector<uint32_t>> latencies(static_cast<size_t>(a.producers));
  std::vector<std::thread> producers;
  const auto start = WallTimer::now();
  const auto end = start + std::chrono::microseconds(static_cast<int64_t>(a.seconds * 1e6));
  for (int p = 0; p < a.producers; ++p) {
    producers.emplace_back([&, p] {
      auto next = start;
      for (uint64_t i = 0; WallTimer::now() < end; ++i) {
        next += interval;
        std::this_thread::sleep_until(next);
        const uint32_t table = static_cast<uint32_t>((p + i) % a.tables);
        const auto t0 = WallTimer::now();
        auto pos = log.append(table, payload);
        const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(WallTimer::now() - t0).count();
        if (!pos.ok()) {
          std::fprintf(stderr, "append: %s\n", pos.status().to_string().c_str());
          return;
        }
        embedder.appended(table, *pos);
        latencies[static_cast<size_t>(p)].push_back(static_cast<uint32_t>(std::min<int64_t>(ns, UINT32_MAX)));
        if (WallTimer::now() > next + std::chrono::milliseconds(100)) next = WallTimer::now();  // no catch-up bursts
      }
    });
  }
  for (auto& t : producers) t.join();
  const double elapsed = std::chrono::duration<double>(WallTimer::now() - start).count();
  stop = true;
  flusher.join();
  sampler.join();
  const MetricsSnapshot m = log.metrics();
  log.close().ignore();

  std::vector<uint32_t> all;
  for (auto& v : latencies) all.insert(all.end(), v.begin(), v.end());
  const uint32_t worst = all.empty() ? 0 : *std::max_element(all.begin(), all.end());
  const auto over = [&](double ms) {
    return std::count_if(all.begin(), all.end(), [&](uint32_t ns) { return ns > ms * 1e6; });
  };
  fmt::print("hard_limit={}MiB max_delay={}ms flush={}ms offered={}MiB/s producers={} segment={}KiB\n",
             a.hard_limit_mib, a.max_delay_ms, a.flush_ms, a.rate_mib, a.producers, a.segment_kib);
  fmt::print("  appends {} ({:.1f} MiB/s achieved)\n", all.size(), all.size() / 1024.0 / elapsed);
  fmt::print("  latency us: p50 {:.1f}  p99 {:.1f}  p99.9 {:.1f}  max {:.1f}\n", percentile(all, 0.5),
             percentile(all, 0.99), percentile(all, 0.999), worst / 1000.0);
  fmt::print("  appends slower than 10 ms: {}, 100 ms: {}\n", over(10), over(100));
  fmt::print("  log size max {:.1f} MiB; flushes {}; throttled {} ({:.0f} ms); waited at limit {} ({:.0f} ms)\n",
             max_bytes.load() / 1048576.0, embedder.flushes(), m.throttled_appends, m.throttle_nanos / 1e6,
             m.space_waits, m.space_wait_nanos / 1e6);
  std::filesystem::remove_all(a.dir);
  return 0;
}
