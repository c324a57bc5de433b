// SPDX-License-Identifier: Apache-2.0
// Plots of `commitlog bench` results through gnuplot: ops/s and p99 latency
// against producers, log-log. Thread producers and fiber producers are two
// panels of one figure, since thousands of fibers on two threads and a few
// threads are different loads. Each engine or policy has one fixed colour, so
// a policy looks the same in every run; variants of it (window, compression,
// size) differ by dash. The figure names the payload sizes and the machine.
#include <fcntl.h>
#include <fmt/core.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string_view>

#include "tools/lab/bench_report.h"

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
  if (rc == 0) return {};
  if (WIFEXITED(rc)) return Status::io_error(fmt::format("gnuplot failed (exit status {})", WEXITSTATUS(rc)));
  return Status::io_error(fmt::format("gnuplot failed (wait status {})", rc));
}

// What /bin/sh would run for "gnuplot": the first executable file of that
// name on PATH.
bool gnuplot_on_path() {
  const char* path = std::getenv("PATH");
  std::string_view dirs = path != nullptr ? path : "";
  while (true) {
    const size_t colon = dirs.find(':');
    const std::string_view dir = dirs.substr(0, colon);
    const std::string file = (dir.empty() ? std::string(".") : std::string(dir)) + "/gnuplot";
    struct stat st {};
    if (::stat(file.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(file.c_str(), X_OK) == 0) return true;
    if (colon == std::string_view::npos) return false;
    dirs.remove_prefix(colon + 1);
  }
}

struct PlotFiles {
  std::string terminal;
  std::string ops, p99;
};

Result<PlotFiles> plot_files(const std::string& path) {
  const std::filesystem::path p(path);
  const std::string ext = p.extension().string();
  PlotFiles files;
  if (ext == ".png") {
    files.terminal = "pngcairo";
  } else if (ext == ".svg") {
    files.terminal = "svg dynamic";
  } else {
    return Status::invalid_argument("--plot " + path + ": the file name must end in .png or .svg");
  }
  const std::string stem = (p.parent_path() / p.stem()).string();
  files.ops = stem + "-ops" + ext;
  files.p99 = stem + "-p99" + ext;
  return files;
}

// Creates `file`, which must not exist (not even as a dangling link): the
// owner's alone; gnuplot then writes into it.
Status create_new(const std::string& file) {
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0 && errno == EEXIST) {
    return Status::invalid_argument("--plot: " + file + " exists; give a new name (a plot is never overwritten)");
  }
  if (fd < 0) return Status::from_errno(errno, "--plot: cannot create " + file);
  ::close(fd);
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

Status check_plot_target(const std::string& path) {
  auto files = plot_files(path);
  if (!files.ok()) return files.status();
  for (const std::string& file : {files->ops, files->p99}) {
    std::error_code ec;
    if (std::filesystem::exists(std::filesystem::symlink_status(file, ec))) {
      return Status::invalid_argument("--plot " + path + ": " + file +
                                      " exists; give a new name (a plot is never overwritten)");
    }
  }
  if (!gnuplot_on_path()) {
    return Status::invalid_argument("--plot " + path + ": gnuplot is not on PATH; install it, or leave out --plot");
  }
  return {};
}

Result<std::vector<std::string>> write_plots(const Points& results, const std::string& path) {
  auto files = plot_files(path);
  if (!files.ok()) return files.status();
  // Only files made here are removed when a plot fails: never another's.
  std::vector<std::string> created;
  Status done;
  for (const std::string& file : {files->ops, files->p99}) {
    done = create_new(file);
    if (!done.ok()) break;
    created.push_back(file);
  }
  if (done.ok()) done = run_gnuplot(plot_script(results, files->terminal, files->ops, PlotKind::kOps));
  if (done.ok()) done = run_gnuplot(plot_script(results, files->terminal, files->p99, PlotKind::kP99));
  if (!done.ok()) {
    for (const std::string& file : created) {
      std::error_code ignored;  // the plot's error is the one to report
      std::filesystem::remove(file, ignored);
    }
    return done;
  }
  return created;
}

}  // namespace commitlog::tools
