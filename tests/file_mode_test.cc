// The permissions of what the log creates: segments 0600 and directories 0700
// by default, commitlog_ext_file_mode and commitlog_ext_directory_mode
// otherwise, and a stricter umask wins on the real file system.
#include <sys/stat.h>

#include <string>

#include <doctest/doctest.h>

#include "commitlog/commit_log.h"
#include "commitlog/config.h"
#include "tests/support/fault_file_system.h"
#include "tests/support/log_files.h"
#include "tests/support/temp_dir.h"

namespace commitlog {
namespace {

using testing::FaultFileSystem;

// Opens a log, appends one mutation, syncs it and closes: a segment exists.
void write_one(const Options& options) {
  auto log = CommitLog::open(options);
  REQUIRE(log.ok());
  REQUIRE((*log)->append(1, std::string_view("x")).ok());
  REQUIRE((*log)->sync().ok());
  REQUIRE((*log)->close().ok());
}

uint32_t mode_of(const std::string& path) {
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

// Restores the process umask at the end of a test.
class Umask {
 public:
  explicit Umask(mode_t mask) : old_(::umask(mask)) {}
  ~Umask() { ::umask(old_); }

 private:
  mode_t old_;
};

TEST_CASE("file modes: the log makes its directories 0700 and its segments 0600 by default") {
  FaultFileSystem fs;
  Options options;
  options.file_system = &fs;
  options.directory = "/var/lib/kv/commitlog";
  write_one(options);
  for (const char* dir : {"/var", "/var/lib", "/var/lib/kv", "/var/lib/kv/commitlog"}) {
    CAPTURE(dir);
    CHECK(fs.permissions(dir) == std::optional<uint32_t>(0700));
  }
  const std::vector<std::string> files = fs.files();
  REQUIRE_FALSE(files.empty());
  for (const std::string& file : files) {
    CAPTURE(file);
    CHECK(fs.permissions(file) == std::optional<uint32_t>(0600));
  }
}

TEST_CASE("file modes: commitlog_ext_file_mode and commitlog_ext_directory_mode give a backup group read access") {
  auto loaded = load_config_string(
      "commitlog_directory: /backup/log\ncommitlog_ext_file_mode: 0640\ncommitlog_ext_directory_mode: 0750\n",
      "t.yaml");
  REQUIRE(loaded.ok());
  FaultFileSystem fs;
  Options options = loaded->options;
  options.file_system = &fs;
  write_one(options);
  CHECK(fs.permissions("/backup") == std::optional<uint32_t>(0750));
  CHECK(fs.permissions("/backup/log") == std::optional<uint32_t>(0750));
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

TEST_CASE("file modes: on disk a segment is 0600 and a new directory 0700 whatever a lax umask says") {
  testing::TempDir root;
  Umask lax(0);
  Options options;
  options.directory = root.file("a/log");
  write_one(options);
  CHECK(mode_of(root.file("a")) == 0700);
  CHECK(mode_of(options.directory) == 0700);
  const auto segments = testing::segment_files(options.directory);
  REQUIRE_FALSE(segments.empty());
  for (const SegmentFile& segment : segments) CHECK(mode_of(segment.path) == 0600);
}

TEST_CASE("file modes: a stricter umask wins over the configured modes") {
  testing::TempDir root;
  Umask strict(077);
  Options options;
  options.directory = root.file("log");
  options.file_mode = 0640;
  options.directory_mode = 0750;
  write_one(options);
  CHECK(mode_of(options.directory) == 0700);
  const auto segments = testing::segment_files(options.directory);
  REQUIRE_FALSE(segments.empty());
  for (const SegmentFile& segment : segments) CHECK(mode_of(segment.path) == 0600);
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
