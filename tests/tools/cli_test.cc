// SPDX-License-Identifier: Apache-2.0
// The face of both binaries: --version, an unknown or missing command, help
// text, sizes in the yaml's syntax, `commitlog config`'s --strict, --format
// yaml and error lists, and the inputs stress --check does not find, driven
// through the built binaries.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include <doctest/doctest.h>

#include "commitlog/config.h"
#include "tests/support/kv_process.h"
#include "tests/support/run_process.h"
#include "tests/support/temp_dir.h"

namespace commitlog {
namespace {

using Run = testing::ProcessRun;

Run run(const std::string& binary, const std::string& args, bool with_stderr = false) {
  return testing::run_process(binary + " " + args + (with_stderr ? " 2>&1" : " 2>/dev/null"));
}

Run cli(const std::string& args, bool with_stderr = false) { return run(COMMITLOG_CLI, args, with_stderr); }

std::string write_file(const testing::TempDir& dir, const std::string& name, const std::string& text) {
  const std::string path = dir.file(name);
  std::ofstream(path) << text;
  return path;
}

TEST_CASE("cli: --version and -V print the CMake project version") {
  for (const char* flag : {"--version", "-V"}) {
    const Run r = cli(flag);
    CHECK(r.exit_code == 0);
    CHECK(r.out == "commitlog " COMMITLOG_VERSION "\n");
  }
}

TEST_CASE("cli: commitlog-kv --version prints the CMake project version") {
  const Run r = run(testing::kv_binary(), "--version");
  CHECK(r.exit_code == 0);
  CHECK(r.out == "commitlog-kv " COMMITLOG_VERSION "\n");
}

TEST_CASE("cli: an unknown command is named and the commands are listed") {
  const Run r = cli("frobnicate --dir x", true);
  CHECK(r.exit_code == 2);
  CHECK(r.out.starts_with("commitlog: unknown command 'frobnicate'\n"));
  CHECK(r.out.find("commands: demo, config, dump, verify, replay, stat, bench, stress") != std::string::npos);
  const Run none = cli("", true);
  CHECK(none.exit_code == 2);
  CHECK(none.out.starts_with("commitlog: a command is required\ncommands: demo, config"));
}

TEST_CASE("cli: usage errors are one line naming the command, with a did-you-mean for a typo") {
  const Run command = cli("verfy /nonexistent", true);
  CHECK(command.exit_code == 2);
  CHECK(command.out.starts_with("commitlog: unknown command 'verfy'; did you mean verify?\n"));
  const Run flag = cli("dump --formta=text /nonexistent", true);
  CHECK(flag.exit_code == 2);
  CHECK(flag.out == "commitlog dump: The following argument was not expected: --formta=text; did you mean --format? "
                    "(commitlog dump --help)\n");
  const Run value = cli("config --format xml /nonexistent", true);
  CHECK(value.exit_code == 2);
  CHECK(value.out == "commitlog config: --format: xml not in {text,json,yaml} (commitlog config --help)\n");
}

TEST_CASE("cli: bench --help shows the format's names, not an enum's values") {
  const Run r = cli("bench --help");
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("--format TEXT:{table,csv,json}") != std::string::npos);
  CHECK(r.out.find("ENUM") == std::string::npos);
  CHECK(r.out.find("->") == std::string::npos);
}

TEST_CASE("cli: size options take the yaml's syntax") {
  testing::TempDir dir;
  const Run wrote = cli("replay-fixture " + dir.file("log") + " --bytes 64KiB --payload 1KiB --segment-size 1MiB");
  CHECK(wrote.exit_code == 0);
  CHECK(wrote.out.find("mutations of 1024 bytes") != std::string::npos);
  const Run too_big = cli("replay-fixture " + dir.file("log2") + " --payload 2MiB", true);
  CHECK(too_big.exit_code == 2);
  CHECK(too_big.out.find("'2MiB' is not from 1B to 1MiB") != std::string::npos);
  const Run not_a_size = cli("replay-fixture " + dir.file("log3") + " --segment-size 32MB", true);
  CHECK(not_a_size.exit_code == 2);
  CHECK(not_a_size.out.find("'32MB' is not a size (e.g. 100, 4KiB, 32MiB)") != std::string::npos);
  CHECK(cli("stress --dir " + dir.file("stress") + " --duration 0.1 --segment-size 64KiB --max-size 1KiB").exit_code ==
        0);
}

TEST_CASE("cli: stress --check names the input it does not find") {
  testing::TempDir dir;
  REQUIRE(cli("stress --dir " + dir.file("log") + " --duration 0.1 --segment-size 64KiB --max-size 1KiB").exit_code ==
          0);
  const Run no_acks = cli("stress --check --dir " + dir.file("log") + " --max-size 1KiB --acks " + dir.file("acks"), true);
  CHECK(no_acks.exit_code == 2);
  CHECK(no_acks.out == "commitlog stress --check: --acks " + dir.file("acks") + ": no such file or directory\n");
  const Run no_log = cli("stress --check --dir " + dir.file("nothing") + " --max-size 1KiB", true);
  CHECK(no_log.exit_code == 2);
  CHECK(no_log.out == "commitlog stress --check: --dir " + dir.file("nothing") + ": no such file or directory\n");
}

TEST_CASE("cli: a wrong value of an option with a fixed set lists the values it takes") {
  const std::string modes = "(expected tolerate-torn-tail, absolute, point-in-time or skip)";
  const Run mode = cli("verify /nonexistent --mode bogus", true);
  CHECK(mode.exit_code == 2);
  CHECK(mode.out == "commitlog verify: --mode: unknown recovery mode 'bogus' " + modes + " (commitlog verify --help)\n");
  const Run recovery = run(testing::kv_binary(), "--recovery bogus", true);
  CHECK(recovery.exit_code == 2);
  CHECK(recovery.out.starts_with("--recovery: unknown recovery mode 'bogus' " + modes + "\n"));
  const Run format = cli("bench --format xml", true);
  CHECK(format.exit_code == 2);
  CHECK(format.out.starts_with("--format: xml not in {table,csv,json}\n"));
}

TEST_CASE("cli: stress refuses a group policy without --window by that flag, leaving no directory behind") {
  testing::TempDir dir;
  const std::string log = dir.file("new/log");
  const Run group = cli("stress --dir " + log + " --policy group --duration 0.1", true);
  CHECK(group.exit_code == 2);
  CHECK(group.out == "commitlog stress: commitlog_sync_group_window (0ms) must be greater than 0 when commitlog_sync "
                     "is group (--window MS, or the key in --config)\n");
  CHECK_FALSE(std::filesystem::exists(dir.file("new")));
  // A run that fails once the directory is made removes it too, if empty.
  const Run acks = cli("stress --dir " + log + " --acks " + dir.file("missing/acks") + " --duration 0.1", true);
  CHECK(acks.exit_code == 2);
  CHECK(acks.out.find("missing/acks") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir.file("new")));
  // One that was there stays.
  std::filesystem::create_directories(log);
  CHECK(cli("stress --dir " + log + " --policy group --duration 0.1").exit_code == 2);
  CHECK(std::filesystem::is_directory(log));
}

TEST_CASE("cli: config --strict makes a warning exit 2") {
  testing::TempDir dir;
  const std::string typo = write_file(dir, "typo.yaml", "comitlog_sync: batch\n");
  CHECK(cli("config " + typo).exit_code == 0);
  const Run strict = cli("config --strict " + typo, true);
  CHECK(strict.exit_code == 2);
  CHECK(strict.out == "commitlog config: " + typo +
                          ":1: comitlog_sync is not a known key and is ignored; did you mean commitlog_sync?\n");
  CHECK(cli("config --strict " + write_file(dir, "ok.yaml", "commitlog_sync: batch\n")).exit_code == 0);
}

TEST_CASE("cli: config prints every problem of a file, one per line") {
  testing::TempDir dir;
  const std::string bad = write_file(dir, "bad.yaml", "commitlog_sync: bach\ncommitlog_segment_size: 32MB\n");
  const Run r = cli("config " + bad, true);
  CHECK(r.exit_code == 2);
  CHECK(r.out == "commitlog config: " + bad + ":1: commitlog_sync: 'bach' names an unknown sync policy (known: " +
                     "adaptive, batch, group, periodic)\ncommitlog config: " + bad +
                     ":2: commitlog_segment_size: '32MB' is not a size (expected e.g. 32MiB)\n");
}

TEST_CASE("cli: config refuses an archiving properties file that does not exist, naming the key and the file") {
  testing::TempDir dir;
  const std::string missing = dir.file("archiving.properties");
  const std::string yaml = write_file(dir, "archive.yaml", "commitlog_ext_archiving_properties: " + missing + "\n");
  const Run r = cli("config " + yaml, true);
  CHECK(r.exit_code == 2);
  CHECK(r.out.starts_with("commitlog config: commitlog_ext_archiving_properties: "));
  CHECK(r.out.find(missing) != std::string::npos);
  CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 1);
  write_file(dir, "archiving.properties", "archive_command=/bin/true\n");
  CHECK(cli("config " + yaml).exit_code == 0);
}

TEST_CASE("cli: config --format yaml prints a file that loads back to the same settings") {
  testing::TempDir dir;
  const std::string file = write_file(dir, "c.yaml",
                                      "commitlog_sync: group\ncommitlog_sync_group_window_in_ms: 0.5\n"
                                      "commitlog_segment_size_in_mb: 8\ncommitlog_compression:\n"
                                      "  - class_name: LZ4Compressor\n");
  const Run r = cli("config --format yaml " + file);
  REQUIRE(r.exit_code == 0);
  const std::string copy = write_file(dir, "copy.yaml", r.out);
  const Result<LoadedConfig> original = load_config_file(file), reloaded = load_config_file(copy);
  REQUIRE(original.ok());
  REQUIRE_MESSAGE(reloaded.ok(), reloaded.status().to_string());
  for (size_t i = 0; i < original->settings.size(); ++i) {
    INFO(original->settings[i].key);
    CHECK(reloaded->settings[i].value == original->settings[i].value);
  }
  CHECK(r.out.find("commitlog_sync_group_window: 500us\n") != std::string::npos);
}

}  // namespace
}  // namespace commitlog
