// SPDX-License-Identifier: Apache-2.0
// The key table: did-you-mean, strict loading, every problem at once,
// Options::validate(), the yaml round trip over every key and unit, and the
// files generated from or checked against the table.
#include <fstream>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <yaml-cpp/yaml.h>

#include "commitlog/lifecycle/archiver.h"
#include "commitlog/commit_log.h"
#include "commitlog/config.h"
#include "commitlog/config/config_keys.h"
#include "commitlog/config/config_render.h"
#include "tests/support/fault_file_system.h"
#include "tests/support/load_config.h"
#include "tests/support/temp_dir.h"

#ifndef COMMITLOG_SOURCE_DIR
#define COMMITLOG_SOURCE_DIR "/work/main"
#endif

namespace commitlog {
namespace {

using testing::load_ok;

std::string load_failure(const std::string& yaml, const LoadOptions& load = {}) {
  Result<LoadedConfig> config = load_config_string(yaml, "t.yaml", load);
  INFO(yaml);
  REQUIRE_FALSE(config.ok());
  return config.status().message();
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  REQUIRE_MESSAGE(in.good(), path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST_CASE("config table: an unknown key within two edits of a known one is a warning that names it") {
  const std::pair<const char*, const char*> typos[] = {
      {"comitlog_sync", "commitlog_sync"},  // no commitlog_ prefix: still ours
      {"commitlog_synk", "commitlog_sync"},
      {"commitlog_sycn_period", "commitlog_sync_period"},
      {"commitlog_segment_size_in_mib", "commitlog_segment_size_in_mb"},
      {"cdc_enable", "cdc_enabled"},
      {"sync_period", "commitlog_sync_period"},  // the prefix left out
      {"segment_size", "commitlog_segment_size"},
  };
  for (const auto& pair : typos) {
    const char* typo = pair.first;
    const char* known = pair.second;
    const LoadedConfig c = load_ok(std::string("cluster_name: x\n") + typo + ": 1\n");
    INFO(typo);
    REQUIRE(c.warnings.size() == 1);
    CHECK(c.warnings[0] ==
          "t.yaml:2: " + std::string(typo) + " is not a known key and is ignored; did you mean " + known + "?");
  }
}

TEST_CASE("config table: an unknown key far from every known one is silent unless it looks like ours") {
  CHECK(load_ok("hints_directory: /x\nnum_tokens: 16\n").warnings.empty());
  const LoadedConfig c = load_ok("commitlog_frobnication_level: 3\n");
  REQUIRE(c.warnings.size() == 1);
  CHECK(c.warnings[0] == "t.yaml:1: commitlog_frobnication_level is not supported and is ignored");
}

TEST_CASE("config table: an unsupported Cassandra key warns only when its value asks for something") {
  for (const char* silent : {"cdc_on_repair_enabled: true", "cdc_on_repair_enabled: false"}) {
    INFO(silent);
    CHECK(load_ok(silent).warnings.empty());
  }
  for (const char* asks : {"commitlog_periodic_queue_size: 5", "commitlog_sync_batch_window_in_ms: 2"}) {
    INFO(asks);
    const LoadedConfig c = load_ok(asks);
    REQUIRE(c.warnings.size() == 1);
    CHECK(c.warnings[0].find("is not supported and is ignored: Cassandra ") != std::string::npos);
  }
  // Why, for the window Cassandra 4 dropped.
  CHECK(load_ok("commitlog_sync_batch_window_in_ms: 2").warnings.at(0) ==
        "t.yaml:1: commitlog_sync_batch_window_in_ms is not supported and is ignored: Cassandra 3's batch window; "
        "batch here syncs as soon as an append asks, as Cassandra 4's does");
}

TEST_CASE("config table: strict loading makes every warning an error") {
  const std::string message = load_failure("comitlog_sync: batch\ncommitlog_periodic_queue_size: 5\n", {.strict = true});
  CHECK(lines_of(message) ==
        std::vector<std::string>{
            "t.yaml:1: comitlog_sync is not a known key and is ignored; did you mean commitlog_sync?",
            "t.yaml:2: commitlog_periodic_queue_size is not supported and is ignored: Cassandra 2's queue of "
            "periodic appends"});
  CHECK(load_config_string("commitlog_sync: batch\ncdc_enabled: false\n", "t.yaml", {.strict = true}).ok());
}

TEST_CASE("config table: every problem of a file is reported at once, in line order") {
  const std::string message = load_failure(
      "commitlog_segment_size: 32MB\n"          // 1: syntax
      "commitlog_synk: batch\n"                 // 2: a warning, listed with the errors
      "commitlog_sync: group\n"                 // 3: no window: reported at this line
      "commit_failure_policy: explode\n"        // 4
      "commitlog_ext_spin_wait: 11ms\n");       // 5: a rule of Options::validate()
  const std::vector<std::string> lines = lines_of(message);
  REQUIRE(lines.size() == 5);
  CHECK(lines[0].starts_with("t.yaml:1: commitlog_segment_size: '32MB' is not a size"));
  CHECK(lines[1].starts_with("warning: t.yaml:2: commitlog_synk is not a known key"));
  CHECK(lines[2] == "t.yaml:3: commitlog_sync_group_window must be greater than 0 when commitlog_sync is group");
  CHECK(lines[3].starts_with("t.yaml:4: commit_failure_policy: 'explode' is not a commit failure policy"));
  CHECK(lines[4] == "t.yaml:5: commitlog_ext_spin_wait: '11ms' must be between 0ms (never spin) and 10ms");
}

TEST_CASE("config table: a value that does not read is not blamed again by validate") {
  const std::string message = load_failure("commitlog_sync: group\ncommitlog_sync_group_window: 15\n");
  CHECK(lines_of(message).size() == 1);
  CHECK(message.starts_with("t.yaml:2: commitlog_sync_group_window: '15' is not a duration"));
}

TEST_CASE("config table: Options::validate names the key of every broken rule") {
  CHECK(Options{}.validate().empty());
  Options o;
  o.sync_policy = "group";
  o.segment_size = 100;
  o.spin_wait = std::chrono::milliseconds(11);
  const std::vector<OptionError> errors = o.validate();
  REQUIRE(errors.size() == 3);
  CHECK(errors[0].key == "commitlog_sync_group_window");
  CHECK(errors[0].depends_on == "commitlog_sync");
  CHECK(errors[1].key == "commitlog_segment_size");
  CHECK(errors[2].key == "commitlog_ext_spin_wait");
  o.sync_policy = "nonesuch";
  CHECK(o.validate()[0].message.starts_with("names an unknown sync policy (known: adaptive, batch"));
}

TEST_CASE("config table: rules that keep the log from hanging or deleting its own segments") {
  testing::TempDir dir;
  Options o;
  o.directory = dir.path() + "/log";
  o.sync_policy = "periodic";
  o.policy.lag_block = std::chrono::milliseconds(0);
  o.cdc.enabled = true;
  o.cdc.raw_directory = dir.path() + "/./log/";
  auto log = CommitLog::open(o);
  REQUIRE_FALSE(log.ok());
  CAPTURE(log.status().message());
  CHECK(lines_of(log.status().message()) ==
        std::vector<std::string>{"periodic_commitlog_sync_lag_block (0ms) must be at least 1ms when commitlog_sync is periodic",
                                 "cdc_raw_directory (" + dir.path() + "/./log/) must not be commitlog_directory: CDC "
                                 "deletes segment files there"});
  o.sync_policy = "batch";  // lag_block is periodic's alone
  o.cdc.raw_directory = dir.path() + "/cdc";
  CHECK(o.validate().empty());
  o.file_system = nullptr;
  o.clock = nullptr;
  log = CommitLog::open(o);
  REQUIRE_FALSE(log.ok());
  CHECK(log.status().message() == "Options::file_system must not be null\nOptions::clock must not be null");
  CHECK(CommitLog::lock_directory(o).status().code() == ErrorCode::kInvalidArgument);
}

TEST_CASE("config table: CommitLog::open reports every broken rule at once, with its value") {
  testing::TempDir dir;
  Options o;
  o.directory = dir.path();
  o.max_mutation_size = 20 << 20;
  o.direct_write_threshold = 100;
  auto log = CommitLog::open(o);
  REQUIRE_FALSE(log.ok());
  CHECK(log.status().code() == ErrorCode::kInvalidArgument);
  CHECK(lines_of(log.status().message()) ==
        std::vector<std::string>{"max_mutation_size (20MiB) is more than half of commitlog_segment_size (32MiB); a "
                                 "segment must hold at least two of the largest mutations",
                                 "commitlog_ext_direct_write_threshold (100B) must be 0B (off) or at least 4KiB"});
}

// Every key, in each unit and name it takes; a new key must add its cases here.
const char* const kRoundTrips[] = {
    "commitlog_directory: /var/lib/x",
    "commitlog_directory: 'a dir: with # marks'",
    "commitlog_sync: batch",
    "commitlog_sync: adaptive",
    "commitlog_sync_period: 1d",
    "commitlog_sync_period: 2h",
    "commitlog_sync_period: 3m",
    "commitlog_sync_period: 4s",
    "commitlog_sync_period: 5ms",
    "commitlog_sync_period_in_ms: 2000",
    "commitlog_sync: group\ncommitlog_sync_group_window: 15ms",
    "commitlog_sync: group\ncommitlog_sync_group_window_in_ms: 0.5",
    "commitlog_sync: group\ncommitlog_sync_group_window_in_ms: 0.333333",
    "commitlog_sync: group\ncommitlog_sync_group_window_in_ms: 15",
    "periodic_commitlog_sync_lag_block: 1m",
    "periodic_commitlog_sync_lag_block_in_ms: 60000",
    "commitlog_segment_size: 1GiB",
    "commitlog_segment_size: 64MiB",
    "commitlog_segment_size_in_mb: 8",
    "max_mutation_size: 512KiB",
    "max_mutation_size: 2MiB",
    "max_mutation_size_in_kb: 2048",
    "commitlog_compression:\n  class_name: LZ4Compressor",
    "commitlog_compression:\n  - class_name: LZ4\n    parameters:\n        -",
    "transparent_data_encryption_options:\n  enabled: false\n  key_alias: testing:1",
    "commitlog_max_compression_buffers_in_pool: 5",
    "commitlog_disk_access_mode: legacy",
    "commitlog_disk_access_mode: auto",
    "commitlog_disk_access_mode: mmap",
    "commitlog_compression:\n  class_name: LZ4Compressor\ncommitlog_disk_access_mode: standard",
    "commitlog_total_space: 8192MiB",
    "commitlog_total_space: 2GiB",
    "commitlog_total_space: 0MiB",
    "commitlog_total_space_in_mb: 100",
    "commit_failure_policy: stop",
    "commit_failure_policy: stop_commit",
    "commit_failure_policy: die",
    "commit_failure_policy: ignore",
    "commitlog_ext_marker_interval: 250us",
    "commitlog_ext_marker_interval: 7ns",
    "commitlog_ext_marker_interval: 2s",
    "commitlog_ext_adaptive_latency_cap: 1500\xc2\xb5s",
    "commitlog_ext_adaptive_latency_cap: 1h",
    "commitlog_ext_total_space_hard_limit: 1GiB",
    "commitlog_ext_total_space_hard_limit: 0MiB",
    "commitlog_ext_total_space_max_delay: 3s",
    "commitlog_ext_total_space_max_delay: 0ms",
    "commitlog_ext_archiving_properties: /etc/cassandra/commitlog_archiving.properties",
    "commitlog_ext_direct_write_threshold: 0B",
    "commitlog_ext_direct_write_threshold: 4096B",
    "commitlog_ext_direct_write_threshold: 64KiB",
    "commitlog_ext_spin_wait: 50us",
    "commitlog_ext_spin_wait: 0ms",
    "commitlog_ext_file_mode: 0640",
    "commitlog_ext_file_mode: 0600",
    "commitlog_ext_directory_mode: 0750",
    "commitlog_ext_directory_mode: 0700",
    "cdc_enabled: true",
    "cdc_enabled: false",
    "cdc_raw_directory: /var/lib/cassandra/cdc_raw",
    "cdc_total_space: 4096MiB",
    "cdc_total_space_in_mb: 100",
    "cdc_free_space_check_interval: 250ms",
    "cdc_free_space_check_interval_ms: 1000",
    "cdc_block_writes: false",
    "commitlog_ext_cdc_tables: [1, 7]",
    "commitlog_ext_cdc_tables: [4294967295]",
};

void check_round_trip(const LoadedConfig& first, const std::string& name) {
  const std::string yaml = config_as_yaml(first, name);
  INFO(yaml);
  const LoadedConfig second = load_ok(yaml);
  CHECK(second.warnings.empty());
  REQUIRE(second.settings.size() == first.settings.size());
  for (size_t i = 0; i < first.settings.size(); ++i) {
    INFO(first.settings[i].key);
    CHECK(second.settings[i].key == first.settings[i].key);
    CHECK(second.settings[i].value == first.settings[i].value);
    CHECK(second.settings[i].note == first.settings[i].note);
    CHECK(second.settings[i].source == first.settings[i].source);
  }
  CHECK(second.options.max_mutation_size == first.options.max_mutation_size);
  CHECK(second.options.policy.group_window == first.options.policy.group_window);
}

TEST_CASE("config table: the yaml output loads back to the same settings, for every key and unit") {
  for (const char* yaml : kRoundTrips) check_round_trip(load_ok(yaml), "t.yaml");
  for (const config::KeySpec& k : config::keys()) {
    if (!k.supported()) continue;
    INFO(k.name);
    bool covered = false;
    for (std::string_view yaml : kRoundTrips) covered = covered || yaml.find(k.name) != std::string_view::npos;
    CHECK(covered);
  }
}

TEST_CASE("config table: the yaml output of every fixture and of conf/commitlog.yaml loads back") {
  std::vector<std::string> files = {COMMITLOG_SOURCE_DIR "/conf/commitlog.yaml"};
  for (const char* f : {"cassandra-3.0.yaml", "cassandra-3.11.yaml", "cassandra-4.0.yaml",
                        "cassandra-4.1-or-5.0.yaml", "cassandra-5.x-trunk.yaml"}) {
    files.push_back(std::string(COMMITLOG_FIXTURES_DIR "/cassandra-yaml/") + f);
  }
  for (const std::string& file : files) {
    INFO(file);
    Result<LoadedConfig> loaded = load_config_file(file);
    REQUIRE(loaded.ok());
    check_round_trip(loaded.value(), file);
  }
}

// The file is the embedded default: it runs durable (commitlog_sync: adaptive)
// where the library, like Cassandra, defaults to periodic. Every other key is
// at its default.
TEST_CASE("config table: conf/commitlog.yaml sets every key to its default but the sync policy, or leaves it empty to follow") {
  const std::string path = COMMITLOG_SOURCE_DIR "/conf/commitlog.yaml";
  const YAML::Node root = YAML::LoadFile(path);
  const LoadedConfig conf = load_config_file(path).value();
  const LoadedConfig defaults = load_ok("");
  for (const config::KeySpec& k : config::keys()) {
    INFO(k.name);
    const YAML::Node value = root[std::string(k.name)];
    if (!k.supported()) {
      CHECK_FALSE(value.IsDefined());
      continue;
    }
    REQUIRE(value.IsDefined());
    // Empty where the default follows other keys or is "unset" (no compression).
    CHECK(value.IsNull() == (!k.derived_default.empty() || k.type->print(Options{}).IsNull()));
  }
  REQUIRE(conf.settings.size() == defaults.settings.size());
  for (size_t i = 0; i < conf.settings.size(); ++i) {
    INFO(conf.settings[i].key);
    if (conf.settings[i].key == "commitlog_sync") {
      CHECK(conf.settings[i].value == "adaptive");
      continue;
    }
    CHECK(conf.settings[i].value == defaults.settings[i].value);
  }
}

TEST_CASE("config table: docs/configuration.md is what `commitlog config --reference` prints") {
  const std::string committed = read_text(COMMITLOG_SOURCE_DIR "/docs/configuration.md");
  const std::string generated = config_reference();
  const std::vector<std::string> want = lines_of(generated), have = lines_of(committed);
  size_t same = 0;
  while (same < want.size() && same < have.size() && want[same] == have[same]) ++same;
  INFO("regenerate it: build/bin/commitlog config --reference > docs/configuration.md");
  INFO("first difference at line " << same + 1 << ": " << (same < want.size() ? want[same] : "(end)"));
  CHECK((same == want.size() && same == have.size()));
  for (const config::KeySpec& k : config::keys()) {
    CHECK(generated.find("`" + std::string(k.name) + "`") != std::string::npos);
  }
}

TEST_CASE("config table: config and archiving files are read through the given file system") {
  testing::FaultFileSystem fs;
  REQUIRE(fs.create_dirs("/conf").ok());
  auto write = [&](const std::string& path, const std::string& text) {
    auto file = fs.open(path, OpenMode::kCreateNew);
    REQUIRE(file.ok());
    REQUIRE((*file)->write_at(0, std::as_bytes(std::span(text))).ok());
  };
  write("/conf/commitlog.yaml", "commitlog_sync: batch\ncommitlog_ext_archiving_properties: /conf/a.properties\n");
  write("/conf/a.properties", "archive_command=/bin/true %path\n");
  Result<LoadedConfig> loaded = load_config_file("/conf/commitlog.yaml", {.file_system = &fs});
  REQUIRE_MESSAGE(loaded.ok(), loaded.status().to_string());
  CHECK(loaded->options.sync_policy == "batch");
  CHECK(load_archiving_properties("/conf/a.properties", fs)->archive_command == "/bin/true %path");
  Options o = loaded->options;
  o.file_system = &fs;
  o.directory = "/log";
  auto log = CommitLog::open(o);
  REQUIRE_MESSAGE(log.ok(), log.status().to_string());
  REQUIRE((*log)->close().ok());
  CHECK(load_config_file("/conf/missing.yaml", {.file_system = &fs}).status().code() == ErrorCode::kNotFound);
  CHECK(load_config_file("/conf", {.file_system = &fs}).status().message() ==
        "/conf: is a directory, expected a yaml file");
}

}  // namespace
}  // namespace commitlog
