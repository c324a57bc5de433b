// `commitlog bench` runs end to end and its CSV has the promised columns.
// Only the shape of the output is checked: speed is reported, never asserted.
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

namespace {

#ifdef COMMITLOG_CLI

struct Run {
  int exit_code = -1;
  std::string out;
};

Run run_cli(const std::string& args) {
  Run run;
  std::FILE* pipe =
      ::popen((std::string(COMMITLOG_CLI) + " " + args + " 2>/dev/null").c_str(), "r");
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

TEST_CASE("bench: one tiny point per engine prints parseable CSV") {
  const Run run = run_cli(
      "bench --engines commitlog,raw --policies batch --producers 1 --duration 0.2s "
      "--warmup 0.05s --format csv");
  REQUIRE(run.exit_code == 0);
  std::stringstream lines(run.out);
  std::string header;
  REQUIRE(std::getline(lines, header));
  const std::vector<std::string> columns = split(header);
  for (const char* c :
       {"engine", "policy", "threads", "fibers", "size_bytes", "ops_per_s", "mb_per_s", "p50_us",
        "p95_us", "p99_us", "p999_us", "user_us_per_op", "sys_us_per_op", "ctxsw_per_op",
        "fsyncs_per_op", "ops_per_fsync", "rss_mib", "x_raw"}) {
    CHECK_MESSAGE(std::find(columns.begin(), columns.end(), c) != columns.end(), c);
  }
  std::vector<std::string> engines;
  for (std::string line; std::getline(lines, line);) {
    const std::vector<std::string> fields = split(line + ",");  // a trailing empty field
    REQUIRE(fields.size() >= columns.size());
    engines.push_back(fields[0]);
    const size_t ops =
        static_cast<size_t>(std::find(columns.begin(), columns.end(), "ops") - columns.begin());
    CHECK(std::stod(fields.at(ops)) > 0);
  }
  CHECK(engines == std::vector<std::string>{"commitlog", "raw"});
}

TEST_CASE("bench: a bad value is a usage error") {
  CHECK(run_cli("bench --sizes 12parsecs --duration 0.1s").exit_code == 2);
  CHECK(run_cli("bench --policies nosuchpolicy --duration 0.1s").exit_code == 2);
}

#endif

}  // namespace
