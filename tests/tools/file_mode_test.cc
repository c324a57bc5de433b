// SPDX-License-Identifier: Apache-2.0
// The permissions of what the log creates (segments, and with CDC cdc_raw,
// its links and idx files): files 0600 and directories 0700 by default,
// commitlog_ext_file_mode and commitlog_ext_directory_mode otherwise, and a
// stricter umask wins on the real file system.
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include <doctest/doctest.h>

#include "commitlog/commit_log.h"
#include "commitlog/config.h"
#include "tests/support/fault_file_system.h"
#include "tests/support/file_modes.h"
#include "tests/support/temp_dir.h"

namespace commitlog {
namespace {

using testing::check_modes_under;
using testing::FaultFileSystem;
using testing::mode_of;
using testing::Umask;

// Opens a log, appends one mutation, syncs it and closes: a segment exists.
void write_one(const Options& options) {
  auto log = CommitLog::open(options);
  REQUIRE(log.ok());
  REQUIRE((*log)->append(1, std::string_view("x")).ok());
  REQUIRE((*log)->sync().ok());
  REQUIRE((*log)->close().ok());
}

// Change data capture of every table, into cdc_raw beside the log's directory.
Options with_cdc(Options options) {
  options.cdc.enabled = true;
  return options;
}

bool has_cdc_index(const std::vector<std::string>& paths) {
  return std::any_of(paths.begin(), paths.end(), [](const std::string& p) { return p.ends_with("_cdc.idx"); });
}

TEST_CASE("file modes: the log makes its directories 0700 and its files 0600 by default, cdc_raw's too") {
  FaultFileSystem fs;
  Options options = with_cdc({});
  options.file_system = &fs;
  options.directory = "/var/lib/kv/commitlog";
  write_one(options);
  for (const char* dir : {"/var", "/var/lib", "/var/lib/kv", "/var/lib/kv/commitlog", "/var/lib/kv/cdc_raw"}) {
    CAPTURE(dir);
    CHECK(fs.permissions(dir) == std::optional<uint32_t>(0700));
  }
  const std::vector<std::string> files = fs.files();
  REQUIRE(has_cdc_index(files));
  for (const std::string& file : files) {
    CAPTURE(file);
    CHECK(fs.permissions(file) == std::optional<uint32_t>(0600));
  }
}

TEST_CASE("file modes: commitlog_ext_file_mode and commitlog_ext_directory_mode give a backup group read access") {
  auto loaded = load_config_string(
      "commitlog_directory: /backup/log\ncommitlog_ext_file_mode: 0640\ncommitlog_ext_directory_mode: 0750\n"
      "cdc_enabled: true\n",
      "t.yaml");
  REQUIRE(loaded.ok());
  FaultFileSystem fs;
  Options options = loaded->options;
  options.file_system = &fs;
  write_one(options);
  CHECK(fs.permissions("/backup") == std::optional<uint32_t>(0750));
  CHECK(fs.permissions("/backup/log") == std::optional<uint32_t>(0750));
  CHECK(fs.permissions("/backup/cdc_raw") == std::optional<uint32_t>(0750));
  REQUIRE(has_cdc_index(fs.files()));
  for (const std::string& file : fs.files()) {
    CAPTURE(file);
    CHECK(fs.permissions(file) == std::optional<uint32_t>(0640));
  }
}

TEST_CASE("file modes: a mode that locks the owner out, or is not octal bits, is refused naming the key") {
  struct Case {
    const char* yaml;
    const char* message;
  };
  for (const Case& c : {
           Case{"commitlog_ext_file_mode: 0400", "commitlog_ext_file_mode"},
           Case{"commitlog_ext_file_mode: 0644x", "is not permission bits in octal"},
           Case{"commitlog_ext_file_mode: 01777", "is not permission bits in octal"},
           Case{"commitlog_ext_file_mode: 0800", "is not permission bits in octal"},
           Case{"commitlog_ext_directory_mode: 0600", "commitlog_ext_directory_mode"},
       }) {
    CAPTURE(c.yaml);
    auto loaded = load_config_string(c.yaml, "t.yaml");
    REQUIRE_FALSE(loaded.ok());
    CHECK(loaded.status().message().find(c.message) != std::string::npos);
  }
}

TEST_CASE("file modes: on disk the modes apply to the log's and cdc_raw's files and directories, less the umask") {
  struct Case {
    const char* name;
    mode_t umask;
    uint32_t file_mode, directory_mode;  // configured
    uint32_t file_expected, directory_expected;
  };
  for (const Case& c : {
           Case{"the defaults whatever a lax umask says", 0, kDefaultFilePermissions, kDefaultDirectoryPermissions,
                0600, 0700},
           Case{"configured, under a lax umask", 0, 0640, 0750, 0640, 0750},
           Case{"configured, a stricter umask wins", 077, 0640, 0750, 0600, 0700},
       }) {
    CAPTURE(c.name);
    testing::TempDir root;
    Umask mask(c.umask);
    Options options = with_cdc({});
    options.directory = root.file("a/log");
    options.file_mode = c.file_mode;
    options.directory_mode = c.directory_mode;
    write_one(options);
    REQUIRE(std::filesystem::is_directory(root.file("a/cdc_raw")));
    CHECK(mode_of(root.file("a")) == c.directory_expected);
    // A segment, its link in cdc_raw and its idx file at least.
    CHECK(check_modes_under(root.file("a"), c.file_expected, c.directory_expected) >= 3);
  }
}

TEST_CASE("file modes: an existing directory keeps its own permissions") {
  testing::TempDir root;
  const std::string dir = root.file("shared");
  REQUIRE(::mkdir(dir.c_str(), 0755) == 0);
  REQUIRE(::chmod(dir.c_str(), 0755) == 0);
  Options options;
  options.directory = dir;
  write_one(options);
  CHECK(mode_of(dir) == 0755);
}

}  // namespace
}  // namespace commitlog
