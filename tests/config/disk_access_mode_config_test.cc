// SPDX-License-Identifier: Apache-2.0
// commitlog_disk_access_mode: its values load, mmap with compression is
// refused by the loader naming the key and value, `commitlog config` names
// the mode legacy and auto come to and why, and where direct is refused, and
// Cassandra 5's yaml, which sets the key, loads without a warning for it.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "commitlog/commit_log.h"
#include "commitlog/config.h"
#include "tests/support/fault_file_system.h"
#include "tests/support/run_cli.h"
#include "tests/support/run_process.h"
#include "tests/support/temp_dir.h"


namespace commitlog {
namespace {

constexpr char kLz4[] = "commitlog_compression:\n  - class_name: LZ4Compressor\n";

Result<LoadedConfig> load(const std::string& yaml) { return load_config_string(yaml, "t.yaml"); }

ConfigValue setting(const LoadedConfig& config) {
  const auto it =
      std::find_if(config.settings.begin(), config.settings.end(),
                   [](const ConfigValue& v) { return v.key == "commitlog_disk_access_mode"; });
  REQUIRE(it != config.settings.end());
  return *it;
}

TEST_CASE("disk access mode: each value loads into Options, plain and compressed") {
  for (const auto& named : kDiskAccessModes) {
    const std::string_view name = named.first;
    const DiskAccessMode mode = named.second;
    for (const std::string compression : {"", kLz4}) {
      if (mode == DiskAccessMode::kMmap && !compression.empty()) continue;
      INFO(name << compression);
      auto config = load(compression + "commitlog_disk_access_mode: " + std::string(name) + "\n");
      REQUIRE_MESSAGE(config.ok(), config.status().to_string());
      CHECK(config->options.disk_access_mode == mode);
      CHECK(config->warnings.empty());
    }
  }
}

TEST_CASE("disk access mode: the default is legacy") {
  auto config = load("commitlog_sync: batch\n");
  REQUIRE(config.ok());
  CHECK(config->options.disk_access_mode == DiskAccessMode::kLegacy);
  CHECK(setting(*config).value == "legacy");
  CHECK(setting(*config).source == ConfigSource::kDefault);
}

TEST_CASE(
    "disk access mode: an unknown value is an error naming the key, the value and the modes") {
  auto config = load("commitlog_disk_access_mode: fast\n");
  REQUIRE_FALSE(config.ok());
  const std::string& message = config.status().message();
  CHECK(message.starts_with(
      "t.yaml:1: commitlog_disk_access_mode: 'fast' is not a disk access mode"));
  for (const char* mode : {"legacy", "auto", "mmap", "standard", "direct"}) {
    CHECK(message.find(mode) != std::string::npos);
  }
}

TEST_CASE("disk access mode: mmap with compression is refused at the key's line") {
  const std::string yaml = std::string(kLz4) += "commitlog_disk_access_mode: mmap\n";
  auto config = load(yaml);
  REQUIRE_FALSE(config.ok());
  CHECK(config.status().message().starts_with(
      "t.yaml:3: commitlog_disk_access_mode: 'mmap' cannot write compressed"));
}

TEST_CASE("disk access mode: direct is refused where the directory has no O_DIRECT, before any file is made") {
  testing::FaultFileSystem fs;
  fs.set_direct_io_block_size(0);
  Options o;
  o.directory = "/log";
  o.file_system = &fs;
  o.disk_access_mode = DiskAccessMode::kDirect;
  auto log = CommitLog::open(o);
  REQUIRE_FALSE(log.ok());
  CHECK(log.status().code() == ErrorCode::kNotSupported);
  CHECK(log.status().message().starts_with("commitlog_disk_access_mode (direct): direct I/O in /log"));
  CHECK(fs.files().empty());
}

TEST_CASE("disk access mode: legacy and auto say which mode they come to") {
  CHECK(setting(load("commitlog_disk_access_mode: legacy\n").value()).note ==
        "mmap, as commitlog_compression is not set");
  CHECK(setting(load(std::string(kLz4)).value()).note ==
        "standard, as commitlog_compression is set");
  CHECK(setting(load("commitlog_disk_access_mode: mmap\n").value()).note.empty());
  CHECK(setting(load("commitlog_disk_access_mode: direct\n").value()).note.empty());
  testing::TempDir dir;
  const std::string in_dir = "commitlog_directory: " + dir.path() + "/log\n";
  CHECK(setting(load(in_dir + "commitlog_disk_access_mode: auto\n").value()).note ==
        "direct, as O_DIRECT works in " + dir.path());
  // tmpfs, where the machine has one there.
  if (std::filesystem::is_directory("/dev/shm")) {
    const std::string shm = "commitlog_directory: /dev/shm/commitlog-test-none\n";
    CHECK(setting(load(shm + "commitlog_disk_access_mode: auto\n").value())
              .note.starts_with("mmap, legacy's choice, as direct I/O in /dev/shm: it is on tmpfs"));
    CHECK(setting(load(shm + "commitlog_disk_access_mode: direct\n").value())
              .note.starts_with("refused here: commitlog_disk_access_mode (direct): direct I/O in /dev/shm"));
    // `commitlog config` shows such a setting with the rest, then fails.
    std::ofstream(dir.file("shm.yaml")) << shm << "commitlog_disk_access_mode: direct\n";
    const testing::CliResult refused = testing::run_cli({"config", dir.file("shm.yaml")});
    CHECK(refused.exit_code == 1);
    CHECK(refused.out.find("commitlog_segment_size") != std::string::npos);
    CHECK_MESSAGE(refused.err.starts_with("commitlog config: refused here: commitlog_disk_access_mode (direct)"),
                  refused.err);
    std::ofstream(dir.file("auto.yaml")) << shm << "commitlog_disk_access_mode: auto\n";
    CHECK(testing::run_cli({"config", dir.file("auto.yaml")}).exit_code == 0);
  }
}

TEST_CASE("disk access mode: Cassandra 5's yaml sets legacy and loads with no warning for it") {
  const std::string path = COMMITLOG_FIXTURES_DIR "/cassandra-yaml/cassandra-5.x-trunk.yaml";
  auto config = load_config_file(path);
  REQUIRE_MESSAGE(config.ok(), config.status().to_string());
  for (const std::string& w : config->warnings)
    CHECK(w.find("disk_access_mode") == std::string::npos);
  const ConfigValue v = setting(*config);
  CHECK(v.value == "legacy");
  CHECK(v.source == ConfigSource::kFile);
  CHECK(v.line == 656);
}

#ifdef COMMITLOG_CLI
TEST_CASE("disk access mode: commitlog config prints the key, its value and the mode it comes to") {
  testing::TempDir dir;
  const std::string yaml = dir.file("c.yaml");
  REQUIRE(
      testing::run_process("printf 'commitlog_disk_access_mode: auto\\n' > " + yaml).exit_code ==
      0);
  const testing::ProcessRun run =
      testing::run_process(std::string(COMMITLOG_CLI) += " config " + yaml);
  REQUIRE(run.exit_code == 0);
  const size_t at = run.out.find("commitlog_disk_access_mode");
  REQUIRE(at != std::string::npos);
  const std::string line = run.out.substr(at, run.out.find('\n', at) - at);
  CHECK(line.find("auto (direct, as O_DIRECT works in ") != std::string::npos);
  CHECK(line.find(yaml + ":1") != std::string::npos);
}
#endif

}  // namespace
}  // namespace commitlog
