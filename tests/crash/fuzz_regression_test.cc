// SPDX-License-Identifier: Apache-2.0
// Every input in tests/fuzz/seeds and tests/fuzz/regressions (inputs that
// once crashed a fuzz target) runs through the fuzz targets' code in every
// build, sanitizers included.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "tests/fuzz/fuzz_inputs.h"

namespace commitlog {
namespace {

std::vector<std::filesystem::path> inputs(const std::string& kind) {
  std::vector<std::filesystem::path> out;
  for (const char* dir : {"seeds", "regressions"}) {
    const auto root = std::filesystem::path(COMMITLOG_SOURCE_DIR) / "tests/fuzz" / dir / kind;
    if (!std::filesystem::exists(root)) continue;
    for (const auto& e : std::filesystem::directory_iterator(root)) {
      if (e.is_regular_file() && e.path().filename() != ".gitkeep") out.push_back(e.path());
    }
  }
  return out;
}

std::vector<std::byte> bytes_of(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> out(chars.size());
  for (size_t i = 0; i < chars.size(); ++i) out[i] = static_cast<std::byte>(chars[i]);
  return out;
}

TEST_CASE("fuzz regressions: segment inputs never crash the reader, seeds replay their entries") {
  const auto files = inputs("segment");
  REQUIRE(files.size() >= 2);
  for (const auto& path : files) {
    CAPTURE(path.string());
    const size_t entries = fuzzing::read_segment(bytes_of(path));
    // The encrypted seeds open only with the fuzzer's key (fuzz_inputs.h).
    const bool encrypted = path.filename().string().find("encrypted") != std::string::npos;
    if (path.string().find("/seeds/") != std::string::npos) CHECK(entries == (encrypted ? 36u : 12u));
  }
}

TEST_CASE("fuzz regressions: config inputs never crash the reader, seeds load") {
  const auto files = inputs("config");
  REQUIRE(files.size() >= 2);
  for (const auto& path : files) {
    CAPTURE(path.string());
    const bool loaded = fuzzing::read_config(bytes_of(path));
    if (path.string().find("/seeds/") != std::string::npos) CHECK(loaded);
  }
}

TEST_CASE("fuzz regressions: resp inputs never crash the parser, seeds parse to the end") {
  const auto files = inputs("resp");
  REQUIRE(files.size() >= 2);
  for (const auto& path : files) {
    CAPTURE(path.string());
    const size_t requests = fuzzing::read_requests(bytes_of(path));
    if (path.string().find("/seeds/") != std::string::npos) CHECK(requests >= 1);
  }
}

}  // namespace
}  // namespace commitlog
