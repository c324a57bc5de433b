// SPDX-License-Identifier: Apache-2.0
// Plots of `commitlog bench` results through gnuplot: ops/s and p99 latency
// against producers, log-log. Thread producers and fiber producers are two
// panels of one figure, since thousands of fibers on two threads and a few
// threads are different loads. Each engine or policy has one fixed colour, so
// a policy looks the same in every run; variants of it (window, compression,
// size) differ by dash. The figure names the payload sizes and the machine.
#include <fmt/core.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "tools/lab/bench_report.h"
#include "tools/common/output.h"

namespace commitlog::tools {
namespace {

using Points = std::vector<PointResult>;

struct Line {
  std::string title;
  std::string colour;
  int dash = 1;
  std::map<int, double> points;  // producers -> y
};
struct Panel {
  std::string xlabel;
  std::vector<Line> lines;
};

std::string colour_of(const EngineSpec& e) {
  static const std::map<std::string, std::string> kColours = {
      {"raw", "#000000"},      {"rocksdb", "#8c564b"}, {"periodic", "#9467bd"},
      {"batch", "#1f77b4"},    {"group", "#2ca02c"},   {"adaptive", "#d62728"},
  };
  // The raw references share raw's colour; the dashes tell them apart.
  const std::string key = e.engine == "commitlog"       ? e.policy
                          : e.engine.starts_with("raw") ? std::string("raw")
                                                        : e.engine;
  const auto it = kColours.find(key);
  return it == kColours.end() ? "#7f7f7f" : it->second;  // a policy an embedder registered
}

// The panel of thread producers and the panel of fiber producers (those that
// have points), one line per engine variant (and size, if several).
std::vector<Panel> panels(const Points& all, double (*y)(const PointResult&)) {
  std::set<uint64_t> sizes;
  for (const PointResult& p : all) sizes.insert(p.spec.size);
  Panel threads{"producer threads", {}}, fibers{"fibers (on the threads named in the key)", {}};
  std::map<std::string, int> dashes;  // colour -> dashes used
  for (const PointResult& p : all) {
    if (p.ops == 0) continue;
    Panel& panel = p.spec.fibers > 1 ? fibers : threads;
    std::string title = p.spec.engine.label() + (p.durable ? "" : " (not durable)");
    if (p.spec.fibers > 1) title += fmt::format(" ({} threads)", p.spec.threads);
    if (sizes.size() > 1) title += ", " + format_bytes(p.spec.size);
    auto line = std::find_if(panel.lines.begin(), panel.lines.end(),
                             [&](const Line& l) { return l.title == title; });
    if (line == panel.lines.end()) {
      const std::string colour = colour_of(p.spec.engine);
      panel.lines.push_back({title, colour, 1, {}});
      line = panel.lines.end() - 1;
      line->dash = 1 + static_cast<int>(std::count_if(
                           panel.lines.begin(), line, [&](const Line& l) { return l.colour == colour; }));
    }
    line->points[p.spec.producers()] = y(p);
  }
  std::vector<Panel> out;
  for (Panel* panel : {&threads, &fibers}) {
    if (!panel->lines.empty()) out.push_back(std::move(*panel));
  }
  return out;
}

// "100 B payloads (fill)" or "payloads 100 B, 4 KiB (fill, kv)".
std::string payload_text(const Points& all) {
  std::set<uint64_t> sizes;
  std::set<std::string> kinds;
  for (const PointResult& p : all) {
    sizes.insert(p.spec.size);
    kinds.insert(payload_kind_name(p.spec.payload));
  }
  std::string size_list, kind_list;
  for (uint64_t s : sizes) size_list += (size_list.empty() ? "" : ", ") + format_bytes(s);
  for (const std::string& k : kinds) kind_list += (kind_list.empty() ? "" : ", ") + k;
  return sizes.size() == 1 ? fmt::format("{} payloads ({})", size_list, kind_list)
                           : fmt::format("payloads {} ({})", size_list, kind_list);
}

// "2 CPUs (Intel(R) Xeon(R) ...), Linux 6.1.0-13-amd64".
std::string machine_text() {
  std::string model;
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; model.empty() && std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos) {
      model = line.substr(line.find(':') + 2);
    }
  }
  struct utsname u {};
  const std::string kernel = ::uname(&u) == 0 ? fmt::format(", {} {}", u.sysname, u.release) : "";
  return fmt::format("{} CPUs{}{}", ::sysconf(_SC_NPROCESSORS_ONLN),
                     model.empty() ? "" : " (" + model + ")", kernel);
}

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) out += c == '"' ? '\'' : c;
  return out + "\"";
}

struct Figure {
  std::string title;
  std::string ylabel;
  std::string yformat;  // gnuplot format of the y tick labels
};

std::string script(const std::vector<Panel>& panels, const Figure& figure,
                   const std::string& terminal, const std::string& file,
                   const std::string& subtitle) {
  std::string s = fmt::format("set terminal {} size {},640\nset output {}\nset termoption noenhanced\n",
                              terminal, panels.size() > 1 ? 1400 : 900, quoted(file));
  int n = 0;
  for (const Panel& panel : panels) {
    for (const Line& line : panel.lines) {
      s += fmt::format("$s{} << EOD\n", n++);
      for (const auto& [x, y] : line.points) s += fmt::format("{} {}\n", x, y);
      s += "EOD\n";
    }
  }
  s += fmt::format("set multiplot layout 1,{} title {}\n", panels.size(),
                   quoted(figure.title + "\\n" + subtitle));
  s += "set logscale xy\nset grid\nset key below\n";
  s += fmt::format("set ylabel {}\nset format y {}\n", quoted(figure.ylabel), quoted(figure.yformat));
  n = 0;
  for (const Panel& panel : panels) {
    std::set<int> xs;  // a tick at each producer count measured
    for (const Line& line : panel.lines) {
      for (const auto& [x, y] : line.points) xs.insert(x);
    }
    std::string ticks;
    for (int x : xs) ticks += fmt::format("{}{}", ticks.empty() ? "" : ", ", x);
    s += fmt::format("set xlabel {}\nset xtics ({})\nset xrange [{}:{}]\nplot ",
                     quoted(panel.xlabel), ticks, *xs.begin() / 1.4, *xs.rbegin() * 1.4);
    for (size_t i = 0; i < panel.lines.size(); ++i) {
      const Line& line = panel.lines[i];
      s += fmt::format(
          "{}$s{} using 1:2 with linespoints lw 2 pt 7 lc rgb {} dt {} title {}", i == 0 ? "" : ", ",
          n++, quoted(line.colour), line.dash, quoted(line.title));
    }
    s += "\n";
  }
  return s + "unset multiplot\n";
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

double ops_per_second(const PointResult& r) { return r.ops_per_second(); }
double p99_us(const PointResult& r) { return static_cast<double>(r.latency.quantile(0.99)) / 1e3; }
double p99_ms(const PointResult& r) { return p99_us(r) / 1e3; }

enum class PlotKind { kOps, kP99 };

std::string plot_script(const Points& results, const std::string& terminal, const std::string& file,
                        PlotKind kind) {
  const std::string subtitle = payload_text(results) + "; " + machine_text();
  if (kind == PlotKind::kOps) {
    return script(panels(results, ops_per_second),
                  {"Durable appends per second", "appends per second", "%.0s%c"}, terminal, file,
                  subtitle);
  }
  // Milliseconds once a p99 reaches 10 ms; the ticks are plain numbers
  // (0.1, 1, 10), never SI prefixes on a unit that has one.
  double highest_us = 0;
  for (const PointResult& r : results) highest_us = std::max(highest_us, p99_us(r));
  const bool in_ms = highest_us >= 10'000;
  return script(panels(results, in_ms ? p99_ms : p99_us),
                {"p99 latency of an append until it is durable",
                 in_ms ? "p99 latency, ms" : "p99 latency, µs", "%g"},
                terminal, file, subtitle);
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
  // Created here, the owner's alone and never over an existing file; gnuplot writes into them.
  for (const std::string& file : {ops_file, p99_file}) CL_RETURN_IF_ERROR(Output::open(file).status());
  CL_RETURN_IF_ERROR(run_gnuplot(plot_script(results, terminal, ops_file, PlotKind::kOps)));
  CL_RETURN_IF_ERROR(run_gnuplot(plot_script(results, terminal, p99_file, PlotKind::kP99)));
  return std::vector<std::string>{ops_file, p99_file};
}

}  // namespace commitlog::tools
