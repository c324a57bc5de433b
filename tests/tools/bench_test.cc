// SPDX-License-Identifier: Apache-2.0
// `commitlog bench` runs end to end and its CSV has the promised columns.
// Only the shape of the output is checked: speed is reported, never asserted.
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/run_process.h"
#include "tests/support/temp_dir.h"

namespace {

namespace testing = commitlog::testing;

#ifdef COMMITLOG_CLI

struct Run {
  int exit_code = -1;
  std::string out;
};

// `with_progress`: the progress lines on stderr too, after stdout's.
Run run_cli(const std::string& args, bool with_progress = false) {
  Run run;
  std::FILE* pipe = ::popen(
      (std::string(COMMITLOG_CLI) + " " + args + (with_progress ? " 2>&1" : " 2>/dev/null")).c_str(),
      "r");
  REQUIRE(pipe != nullptr);
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) run.out.append(buffer, n);
  const int status = ::pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> fields;
  std::stringstream in(line);
  for (std::string field; std::getline(in, field, ',');) fields.push_back(field);
  return fields;
}

// The bench's CSV report: a header, then one row per point.
struct CsvReport {
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;

  bool has(const char* name) const {
    return std::find(columns.begin(), columns.end(), name) != columns.end();
  }
  size_t index(const char* name) const {
    const auto at = std::find(columns.begin(), columns.end(), name);
    REQUIRE_MESSAGE(at != columns.end(), name);
    return static_cast<size_t>(at - columns.begin());
  }
};

CsvReport parse_csv(const std::string& out) {
  CsvReport report;
  std::stringstream lines(out);
  std::string header;
  REQUIRE(std::getline(lines, header));
  report.columns = split(header);
  for (std::string line; std::getline(lines, line);) {
    report.rows.push_back(split(line + ","));  // a trailing empty field
    REQUIRE(report.rows.back().size() >= report.columns.size());
  }
  return report;
}

TEST_CASE("bench: one tiny point per engine prints parseable CSV") {
  const Run run = run_cli(
      "bench --engines commitlog,raw --policies batch --producers 1 --duration 0.2s "
      "--warmup 0.05s --format csv");
  REQUIRE(run.exit_code == 0);
  const CsvReport report = parse_csv(run.out);
  for (const char* c :
       {"engine", "policy", "threads", "fibers", "size_bytes", "ops_per_s", "mb_per_s", "p50_us",
        "p95_us", "p99_us", "p999_us", "user_us_per_op", "sys_us_per_op", "ctxsw_per_op",
        "fsyncs_per_op", "ops_per_fsync", "rss_mib", "x_raw"}) {
    CHECK_MESSAGE(report.has(c), c);
  }
  std::vector<std::string> engines;
  const size_t ops = report.index("ops");
  for (const std::vector<std::string>& fields : report.rows) {
    engines.push_back(fields[0]);
    CHECK(std::stod(fields.at(ops)) > 0);
  }
  CHECK(engines == std::vector<std::string>{"commitlog", "raw"});
}

TEST_CASE("bench: a bad value is a usage error") {
  CHECK(run_cli("bench --sizes 12parsecs --duration 0.1s").exit_code == 2);
  CHECK(run_cli("bench --policies nosuchpolicy --duration 0.1s").exit_code == 2);
  CHECK(run_cli("bench --payload nosuchpayload --duration 0.1s").exit_code == 2);
  CHECK(run_cli("bench --compression zstd --duration 0.1s").exit_code == 2);
  CHECK(run_cli("bench --large-path sideways --duration 0.1s").exit_code == 2);
}

TEST_CASE("bench: --large-path runs and labels the pooled and the direct route") {
  const Run run = run_cli(
      "bench --engines commitlog --policies batch --large-path pooled,direct --sizes 8KiB "
      "--producers 1 --duration 0.1s --warmup 0.02s --format csv");
  REQUIRE(run.exit_code == 0);
  CHECK(run.out.find("commitlog,batch,pooled,") != std::string::npos);
  CHECK(run.out.find("commitlog,batch,direct,") != std::string::npos);
}

TEST_CASE("bench: kv payloads compress, random ones do not, both with and without lz4") {
  // Each flush is compressed on its own, so a flush must hold many records
  // for their common fields to count: 64 producers.
  const Run run = run_cli(
      "bench --engines commitlog --policies batch --producers 1x64 --duration 0.2s --warmup 0.05s "
      "--sizes 200 --payload kv,random --compression none,lz4 --format csv");
  REQUIRE(run.exit_code == 0);
  const CsvReport report = parse_csv(run.out);
  const size_t payload = report.index("payload"), compression = report.index("compression"),
               ratio = report.index("compression_ratio"), cpu = report.index("cpu_us_per_op");
  std::map<std::string, double> ratios;  // by "payload compression"
  for (const std::vector<std::string>& fields : report.rows) {
    CHECK(std::stod(fields.at(cpu)) > 0);
    ratios[fields.at(payload) + " " + fields.at(compression)] = std::stod(fields.at(ratio));
  }
  REQUIRE(ratios.size() == 4);
  CHECK(ratios["kv lz4"] > 1.5);
  CHECK(ratios["random lz4"] > 0.9);
  CHECK(ratios["random lz4"] < 1.05);
  CHECK(ratios["kv none"] == doctest::Approx(1.0));
  CHECK(ratios["random none"] == doctest::Approx(1.0));
}

TEST_CASE("bench: the table labels compressed points and shows payload and ratio") {
  const Run run = run_cli(
      "bench --engines commitlog --policies batch --producers 1 --duration 0.1s --warmup 0.05s "
      "--payload kv --compression lz4");
  REQUIRE(run.exit_code == 0);
  CHECK(run.out.find("| payload |") != std::string::npos);
  CHECK(run.out.find("| ratio |") != std::string::npos);
  CHECK(run.out.find("| commitlog batch lz4 |") != std::string::npos);
  CHECK(run.out.find("| kv |") != std::string::npos);
}

TEST_CASE("bench: rounds run the engines of a shape forward, then backward") {
  const Run run = run_cli(
      "bench --engines commitlog,raw --policies batch,adaptive --producers 1 --duration 0.05s "
      "--warmup 0.01s --repeat 3 --format csv",
      /*with_progress=*/true);
  REQUIRE(run.exit_code == 0);
  // Progress lines: "[round:point/points] engine, ...", in the order run.
  std::vector<std::string> order;
  std::stringstream lines(run.out);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("[", 0) == 0) order.push_back(line.substr(0, line.find(',')));
  }
  CHECK(order ==
        std::vector<std::string>{"[1:1/3] commitlog batch", "[1:2/3] commitlog adaptive",
                                 "[1:3/3] raw", "[2:3/3] raw", "[2:2/3] commitlog adaptive",
                                 "[2:1/3] commitlog batch", "[3:1/3] commitlog batch",
                                 "[3:2/3] commitlog adaptive", "[3:3/3] raw"});
}

// The index of the cell named `name` in the table's header row split at '|'
// (cell 0 is the empty text before the first '|'), or -1.
int table_column(const std::string& header, const std::string& name) {
  int column = 0;
  std::stringstream cells(header);
  for (std::string cell; std::getline(cells, cell, '|'); ++column) {
    if (cell == " " + name + " ") return column;
  }
  return -1;
}

TEST_CASE("bench: the table reports measurements and ratios to raw, nothing judged") {
  const Run run = run_cli(
      "bench --engines commitlog,raw --policies batch,adaptive --producers 1 --duration 0.1s "
      "--warmup 0.02s");
  REQUIRE(run.exit_code == 0);
  std::stringstream lines(run.out);
  std::string line, header;
  while (std::getline(lines, line) && line.rfind("| engine |", 0) != 0) {}
  header = line;
  const int ratio = table_column(header, "x raw");
  REQUIRE_MESSAGE(ratio > 0, run.out);
  std::map<std::string, std::string> ratios;  // engine -> its "x raw" cell
  while (std::getline(lines, line) && line.rfind("|", 0) == 0) {
    std::vector<std::string> cells;
    std::stringstream row(line);
    for (std::string cell; std::getline(row, cell, '|');) cells.push_back(cell);
    if (cells.size() > static_cast<size_t>(ratio)) ratios[cells[1]] = cells[ratio];
  }
  CHECK(ratios[" raw "] == " 1.00 ");
  CHECK(ratios[" commitlog batch "] != " - ");
  CHECK(ratios[" commitlog adaptive "] != " - ");
  for (const char* judged : {"met:", "NOT met", "goal", "Goal"}) {
    CHECK_MESSAGE(run.out.find(judged) == std::string::npos, judged);
  }
}

TEST_CASE("bench: the pre-written raw references run beside raw and are ratio columns") {
  const Run run = run_cli(
      "bench --engines commitlog,raw,raw-overwrite,raw-direct --policies batch --producers 1 "
      "--duration 0.1s --warmup 0.02s --format csv");
  REQUIRE(run.exit_code == 0);
  const CsvReport report = parse_csv(run.out);
  const size_t engine = report.index("engine"), fsyncs = report.index("fsyncs"), ops = report.index("ops");
  const size_t x_overwrite = report.index("x_raw_overwrite"), x_direct = report.index("x_raw_direct");
  std::map<std::string, std::vector<std::string>> rows;
  for (const std::vector<std::string>& fields : report.rows) rows[fields.at(engine)] = fields;
  REQUIRE(rows.size() == 4);
  CHECK(std::stod(rows["raw-overwrite"].at(x_overwrite)) == doctest::Approx(1.0));
  CHECK(std::stod(rows["raw-direct"].at(x_direct)) == doctest::Approx(1.0));
  CHECK(std::stod(rows["commitlog"].at(x_direct)) > 0);
  // Every O_DSYNC write is its own sync, and the counts are read while no
  // append is in flight: exactly one per op.
  CHECK(std::stoull(rows["raw-direct"].at(ops)) > 0);
  CHECK(rows["raw-direct"].at(fsyncs) == rows["raw-direct"].at(ops));
}

TEST_CASE("bench: --access-modes labels the points with the mode") {
  const Run run = run_cli(
      "bench --engines commitlog --policies batch --access-modes mmap,legacy --producers 1 "
      "--duration 0.05s --warmup 0.01s --format csv");
  REQUIRE(run.exit_code == 0);
  CHECK(run.out.find("commitlog,batch,,,,mmap,") != std::string::npos);
  CHECK(run.out.find("commitlog,batch,,,,legacy,") != std::string::npos);
}

TEST_CASE("bench: --encryption runs each point in the clear and encrypted, labelled") {
  const Run run = run_cli(
      "bench --engines commitlog --policies batch --encryption none,aes --producers 1 "
      "--duration 0.05s --warmup 0.01s --format csv");
  REQUIRE(run.exit_code == 0);
  CHECK(run.out.find("commitlog,batch,,,none,") != std::string::npos);
  CHECK(run.out.find("commitlog,batch,,,aes,") != std::string::npos);
  CHECK(run_cli("bench --engines commitlog --encryption des --producers 1 --duration 0.05s").exit_code == 2);
}

TEST_CASE("bench: an access mode the log cannot open is refused before any point runs") {
  const Run run = run_cli(
      "bench --engines commitlog,raw --policies batch --compression lz4 --access-modes direct,mmap "
      "--producers 1 --duration 0.05s --warmup 0.01s",
      /*with_progress=*/true);
  CHECK(run.exit_code == 2);
  CHECK_MESSAGE(run.out.find("commitlog_disk_access_mode (mmap) cannot write compressed") != std::string::npos,
                run.out);
  CHECK(run.out.find("ops/s") == std::string::npos);
  CHECK(run_cli("bench --access-modes sideways --duration 0.05s").exit_code == 2);
}

// `commitlog bench ARGS` with PATH set to `path` alone, stderr with stdout.
Run run_with_path(const std::string& path, const std::string& args) {
  const testing::ProcessRun run =
      testing::run_process("PATH=" + path + " " + COMMITLOG_CLI + " bench " + args + " 2>&1");
  return {run.exit_code, run.out};
}

// A gnuplot that reads its script and exits with `code`, shell builtins only.
void fake_gnuplot(const testing::TempDir& dir, int code) {
  const std::string file = dir.file("gnuplot");
  std::ofstream(file) << "#!/bin/sh\nwhile read -r line; do :; done\nexit " << code << "\n";
  std::filesystem::permissions(file, std::filesystem::perms::owner_all);
}

TEST_CASE("bench: --plot is refused before any point runs without gnuplot or over a plot, and a failed one leaves none") {
  testing::TempDir tmp, bin;
  const std::string point = "--engines raw --producers 1 --duration 0.05s --warmup 0.01s --plot ";
  const std::string plot = tmp.file("x.png");
  const Run missing = run_with_path(bin.path(), point + plot);
  CHECK(missing.exit_code == 2);
  CHECK(missing.out == "commitlog bench: --plot " + plot + ": gnuplot is not on PATH; install it, or leave out --plot\n");

  fake_gnuplot(bin, 1);
  std::ofstream(tmp.file("x-p99.png")) << "mine";
  const Run exists = run_with_path(bin.path(), point + plot);
  CHECK(exists.exit_code == 2);
  CHECK(exists.out.find("x-p99.png exists") != std::string::npos);
  CHECK(exists.out.find("ops/s") == std::string::npos);
  CHECK_FALSE(std::filesystem::exists(tmp.file("x-ops.png")));

  std::filesystem::remove(tmp.file("x-p99.png"));
  const Run failed = run_with_path(bin.path(), point + plot);
  CHECK(failed.exit_code == 1);
  CHECK(failed.out.find("gnuplot failed (exit status 1)") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(tmp.file("x-ops.png")));
  CHECK_FALSE(std::filesystem::exists(tmp.file("x-p99.png")));

  std::filesystem::remove(bin.file("gnuplot"));
  fake_gnuplot(bin, 0);
  const Run plotted = run_with_path(bin.path(), point + plot);
  CHECK(plotted.exit_code == 0);
  CHECK(std::filesystem::exists(tmp.file("x-ops.png")));
  CHECK(std::filesystem::exists(tmp.file("x-p99.png")));
}

#endif

}  // namespace
