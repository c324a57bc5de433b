// SPDX-License-Identifier: Apache-2.0
// The README's first command after its build step: scripts/mission.sh runs
// commitlog-kv under redis-benchmark and checking writers, kill -9's it,
// restarts it, and reports. Run here on a scratch directory, its report must
// say that nothing acknowledged was lost, and nothing it started may outlive it.
// Skipped when redis-benchmark or redis-cli is missing (cmake/install-deps.sh
// installs them).
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "tests/support/temp_dir.h"

namespace commitlog {
namespace {

namespace fs = std::filesystem;

bool redis_tools_missing() {
  return std::system("command -v redis-benchmark >/dev/null && command -v redis-cli >/dev/null") != 0;
}

struct Mission {
  int exit_code = -1;
  std::string report;  // stdout, then stderr
};

Mission run_mission(const std::string& args) {
  const std::string cli = COMMITLOG_CLI;
  const std::string command = "KV=" + cli.substr(0, cli.rfind('/') + 1) + "commitlog-kv CLI=" + cli +
                              " bash " COMMITLOG_SOURCE_DIR "/scripts/mission.sh " + args + " 2>&1";
  Mission m;
  std::FILE* pipe = ::popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) m.report.append(buffer, n);
  const int status = ::pclose(pipe);
  m.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return m;
}

// The report line "  <name>  <text>", as its text, or "".
std::string field(const std::string& report, const std::string& name) {
  std::stringstream lines(report);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("  " + name + " ", 0) == 0) {
      return line.substr(line.find_first_not_of(' ', name.size() + 2));
    }
  }
  return "";
}

// The first number of `text`, thousands separators allowed; -1 if none.
long long first_number(const std::string& text) {
  std::smatch m;
  if (!std::regex_search(text, m, std::regex("[0-9][0-9,]*"))) return -1;
  std::string digits = m.str();
  std::erase(digits, ',');
  return std::stoll(digits);
}

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Command lines of running processes that contain `needle`.
std::vector<std::string> processes_with(const std::string& needle) {
  std::vector<std::string> found;
  for (const fs::directory_entry& e : fs::directory_iterator("/proc")) {
    std::string cmdline = read_all(e.path().string() + "/cmdline");
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    if (cmdline.find(needle) != std::string::npos) found.push_back(cmdline);
  }
  return found;
}

TEST_CASE("mission: the report says every acknowledged SET survived kill -9 and replay" *
          doctest::skip(redis_tools_missing())) {
  testing::TempDir tmp;
  const std::string dir = tmp.file("mission");
  const Mission m = run_mission("--dir " + dir + " --seconds 1");
  INFO(m.report);
  CHECK(m.exit_code == 0);
  CHECK(field(m.report, "policy").rfind("adaptive (conf/commitlog.yaml:", 0) == 0);
  CHECK(first_number(field(m.report, "load")) > 0);
  const long long acknowledged = first_number(field(m.report, "acknowledged"));
  const long long recovered = first_number(field(m.report, "recovered"));
  CHECK(acknowledged > 0);
  CHECK(recovered >= acknowledged);
  CHECK(field(m.report, "lost") == "0");
  CHECK(field(m.report, "restart").find("replayed") == 0);
  CHECK(field(m.report, "verify").find("intact") != std::string::npos);
  CHECK(m.report.find("Every acknowledged SET survived the kill.") != std::string::npos);
  CHECK(fs::exists(dir + "/log-at-kill"));
  CHECK_FALSE(fs::is_empty(dir + "/log-at-kill"));

  // Nothing it started runs on: not the server, a writer or the benchmark.
  CHECK(processes_with(dir).empty());
  for (const char* out : {"/server.out", "/server-restart.out"}) {
    std::smatch port;
    const std::string text = read_all(dir + out);
    REQUIRE(std::regex_search(text, port, std::regex("127\\.0\\.0\\.1:([0-9]+)")));
    CHECK(processes_with("-p " + port[1].str() + " ").empty());
  }
}

TEST_CASE("mission: a --dir that holds anything is refused and left as it was" *
          doctest::skip(redis_tools_missing())) {
  testing::TempDir tmp;
  std::ofstream(tmp.file("mine")) << "not the mission's";
  const Mission m = run_mission("--dir " + tmp.path());
  CHECK(m.exit_code == 2);
  CHECK(m.report.find("is not empty") != std::string::npos);
  CHECK(read_all(tmp.file("mine")) == "not the mission's");
  CHECK(std::distance(fs::directory_iterator(tmp.path()), fs::directory_iterator()) == 1);
}

}  // namespace
}  // namespace commitlog
