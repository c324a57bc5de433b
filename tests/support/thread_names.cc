// SPDX-License-Identifier: Apache-2.0
#include "tests/support/thread_names.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <system_error>
#include <thread>
#include <utility>

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

// How many threads named `name` there are, and how many of them sleep.
std::pair<int, int> named_and_asleep(const std::string& name) {
  int named = 0, asleep = 0;
  std::error_code error;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task", error)) {
    std::ifstream comm(task.path() / "comm");
    std::string task_name;
    if (!std::getline(comm, task_name) || task_name != name) continue;
    ++named;
    // "tid (comm) state ...": the state follows the last ')'.
    std::ifstream stat(task.path() / "stat");
    std::string line;
    std::getline(stat, line);
    const size_t paren = line.rfind(')');
    if (paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] == 'S') ++asleep;
  }
  return {named, asleep};
}

}  // namespace

bool await_asleep(const std::string& name) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (std::chrono::steady_clock::now() < deadline) {
    const auto [named, asleep] = named_and_asleep(name);
    if (named > 0 && named == asleep) return true;
    std::this_thread::yield();
  }
  return false;
}

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
