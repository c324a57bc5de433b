// SPDX-License-Identifier: Apache-2.0
// How `commitlog bench` prints its points: a Markdown table, CSV or JSON, all
// three from one column list of measurements and ratios to the reference
// engines; and gnuplot plots of ops/s and p99 latency against producers.
#pragma once

#include <string>
#include <vector>

#include "commitlog/status.h"
#include "tools/lab/bench_runner.h"

namespace commitlog::tools {

enum class BenchFormat { kTable, kCsv, kJson };

// The same-shaped point (threads, fibers, size, payload) of `engine`
// ("raw", "rocksdb"), or null.
const PointResult* find_reference(const std::vector<PointResult>& results, const PointResult& point,
                                  const std::string& engine);

// "100 B", "4 KiB", "1 MiB".
std::string format_bytes(uint64_t bytes);

// The whole report: one row (or object) per point, and for the table a list
// of the points whose appends failed.
std::string format_results(const std::vector<PointResult>& results, BenchFormat format);

// Ok when write_plots(_, `path`) can run: `path` ends in .png or .svg,
// neither `<stem>-ops<ext>` nor `<stem>-p99<ext>` exists, and gnuplot is on
// PATH; else kInvalidArgument naming what is wrong. Checked before the first
// point, so that a run is not spent on plots that cannot be written.
[[nodiscard]] Status check_plot_target(const std::string& path);

// Writes `<stem>-ops<ext>` and `<stem>-p99<ext>` (ext .png or .svg) for
// `path` = `<stem><ext>`, through gnuplot on PATH: ops/s and p99 latency
// against producers, threads and fibers in separate panels, one fixed colour
// per engine or policy, payload sizes and machine named on the figure.
// Each file is created new (an existing one is refused); when a plot fails,
// the files this call created are removed. Returns the files written.
Result<std::vector<std::string>> write_plots(const std::vector<PointResult>& results,
                                             const std::string& path);

}  // namespace commitlog::tools
