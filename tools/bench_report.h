// How `commitlog bench` prints its points: a Markdown table (pasted as is
// into docs/benchmarks.md), CSV or JSON, all three from one column list; the
// goals of issues 6 and 9 checked against the points present (reported, never
// asserted); and gnuplot plots of ops/s and p99 latency against producers.
#pragma once

#include <string>
#include <vector>

#include "commitlog/status.h"
#include "tools/bench_runner.h"

namespace commitlog::tools {

enum class BenchFormat { kTable, kCsv, kJson };

// The same-shaped point (threads, fibers, size, payload) of `engine`
// ("raw", "rocksdb"), or null.
const PointResult* find_reference(const std::vector<PointResult>& results, const PointResult& point,
                                  const std::string& engine);

// "100 B", "4 KiB", "1 MiB".
std::string format_bytes(uint64_t bytes);

struct GoalCheck {
  bool met = false;
  std::string text;  // what was compared, and the figures
};
// Each goal for which `results` has the points to judge it.
std::vector<GoalCheck> check_goals(const std::vector<PointResult>& results);

// The whole report: the points and, for table and JSON, the goals.
std::string format_results(const std::vector<PointResult>& results, BenchFormat format);

// Writes `<stem>-ops<ext>` and `<stem>-p99<ext>` (ext .png or .svg) for
// `path` = `<stem><ext>`, through /usr/bin/gnuplot. Returns the files written.
Result<std::vector<std::string>> write_plots(const std::vector<PointResult>& results,
                                             const std::string& path);

}  // namespace commitlog::tools
