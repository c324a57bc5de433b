// Plots of `commitlog bench` results through gnuplot: ops/s and p99 latency
// against producers (log-log), one line per engine variant, thread and fiber
// producers drawn as separate lines.
#include <fmt/core.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>

#include "tools/bench_report.h"

namespace commitlog::tools {
namespace {

using Points = std::vector<PointResult>;
using Series = std::map<std::string, std::map<int, double>>;  // title -> producers -> y

Series collect(const Points& all, double (*y)(const PointResult&)) {
  std::set<uint64_t> sizes;
  for (const PointResult& p : all) sizes.insert(p.spec.size);
  Series series;
  for (const PointResult& p : all) {
    if (p.ops == 0) continue;
    std::string title = p.spec.engine.label();
    if (p.spec.fibers > 1) title += fmt::format(" ({} threads of fibers)", p.spec.threads);
    if (sizes.size() > 1) title += ", " + format_bytes(p.spec.size);
    series[title][p.spec.producers()] = y(p);
  }
  return series;
}

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) out += c == '"' ? '\'' : c;
  return out + "\"";
}

std::string script(const Series& series, const std::string& terminal, const std::string& file,
                   const std::string& title, const std::string& ylabel) {
  std::string s =
      fmt::format("set terminal {} size 960,600\nset output {}\n", terminal, quoted(file));
  s += fmt::format("set title {}\nset xlabel \"producers (threads, or fibers on their threads)\"\n",
                   quoted(title));
  s += fmt::format("set ylabel {}\nset logscale xy\nset grid\nset key below\n", quoted(ylabel));
  s += "set format x \"%.0s%c\"\nset format y \"%.0s%c\"\n";  // 1k, 10k, 1M
  int low = 1 << 30, high = 1;
  for (const auto& [name, points] : series) {
    for (const auto& [x, y] : points) low = std::min(low, x), high = std::max(high, x);
  }
  s += fmt::format("set xrange [{}:{}]\n", low / 1.4, high * 1.4);
  int i = 0;
  for (const auto& [name, points] : series) {
    s += fmt::format("$s{} << EOD\n", i++);
    for (const auto& [x, y] : points) s += fmt::format("{} {}\n", x, y);
    s += "EOD\n";
  }
  s += "plot ";
  i = 0;
  for (const auto& [name, points] : series) {
    s += fmt::format("{}$s{} using 1:2 with linespoints lw 2 title {}", i == 0 ? "" : ", ", i,
                     quoted(name));
    ++i;
  }
  return s + "\n";
}

Status run_gnuplot(const std::string& text) {
  std::FILE* pipe = ::popen("gnuplot", "w");
  if (pipe == nullptr) return Status::io_error("cannot run gnuplot");
  std::fwrite(text.data(), 1, text.size(), pipe);
  const int rc = ::pclose(pipe);
  if (rc != 0)
    return Status::io_error(fmt::format("gnuplot failed (status {}); is gnuplot installed?", rc));
  return {};
}

}  // namespace

Result<std::vector<std::string>> write_plots(const Points& results, const std::string& path) {
  const std::filesystem::path p(path);
  const std::string ext = p.extension().string();
  std::string terminal;
  if (ext == ".png") {
    terminal = "pngcairo";
  } else if (ext == ".svg") {
    terminal = "svg dynamic";
  } else {
    return Status::invalid_argument("--plot " + path + ": the file name must end in .png or .svg");
  }
  const std::string stem = (p.parent_path() / p.stem()).string();
  const std::string ops_file = stem + "-ops" + ext, p99_file = stem + "-p99" + ext;
  CL_RETURN_IF_ERROR(
      run_gnuplot(script(collect(results, [](const PointResult& r) { return r.ops_per_second(); }),
                         terminal, ops_file, "Durable appends per second", "ops/s")));
  CL_RETURN_IF_ERROR(run_gnuplot(script(
      collect(
          results,
          [](const PointResult& r) { return static_cast<double>(r.latency.quantile(0.99)) / 1e6; }),
      terminal, p99_file, "p99 latency of append until durable", "p99 latency, ms")));
  return std::vector<std::string>{ops_file, p99_file};
}

}  // namespace commitlog::tools
