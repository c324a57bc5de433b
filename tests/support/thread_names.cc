// SPDX-License-Identifier: Apache-2.0
#include "tests/support/thread_names.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <system_error>
#include <thread>

namespace commitlog::testing {
namespace {

std::set<std::string> names_now(pid_t pid) {
  std::set<std::string> names;
  std::error_code error;
  const std::filesystem::path tasks = "/proc/" + std::to_string(pid) + "/task";
  for (const auto& task : std::filesystem::directory_iterator(tasks, error)) {
    std::ifstream comm(task.path() / "comm");
    std::string name;
    if (std::getline(comm, name)) names.insert(name);
  }
  return names;
}

}  // namespace

std::set<std::string> thread_names(pid_t pid, const std::set<std::string>& awaited) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  std::set<std::string> names = names_now(pid);
  while (!std::includes(names.begin(), names.end(), awaited.begin(), awaited.end()) &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    names = names_now(pid);
  }
  return names;
}

}  // namespace commitlog::testing
