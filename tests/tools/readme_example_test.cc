// SPDX-License-Identifier: Apache-2.0
// The README's embedding example is examples/embed.cc, byte for byte (the
// install tests compile and run the file against the installed library).
#include <fstream>
#include <sstream>
#include <string>

#include <doctest/doctest.h>

namespace {

std::string read_source_file(const std::string& relative) {
  std::ifstream in(std::string(COMMITLOG_SOURCE_DIR) + "/" + relative, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), relative);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST_CASE("readme: its embedding example is examples/embed.cc, byte for byte") {
  const std::string example = read_source_file("examples/embed.cc");
  const std::string readme = read_source_file("README.md");
  REQUIRE(!example.empty());
  CHECK_MESSAGE(readme.find("```cpp\n" + example + "```\n") != std::string::npos,
                "copy examples/embed.cc into README.md's ```cpp block (or the other way round)");
}

}  // namespace
