// SPDX-License-Identifier: Apache-2.0
// The yaml configuration reader: real cassandra.yaml files, conf/commitlog.yaml,
// each key in its new and old style, and one test per kind of error.
#include <stdexcept>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <fmt/core.h>

#include "commitlog/commit_log.h"
#include "commitlog/config.h"
#include "commitlog/config/config_values.h"
#include "tests/support/load_config.h"
#include "tests/support/log_files.h"
#include "tests/support/run_cli.h"
#include "tests/support/temp_dir.h"

#ifndef COMMITLOG_SOURCE_DIR
#define COMMITLOG_SOURCE_DIR "/work/main"
#endif

namespace commitlog {
namespace {

using testing::load_ok;
using std::chrono::milliseconds;
using std::chrono::microseconds;
constexpr uint64_t kMiB = 1ull << 20;
constexpr uint64_t kKiB = 1ull << 10;

// Loads `yaml` and checks that it fails with `code` and a message that starts
// with t.yaml:<line>: and names `key`, `'value'` and `what`.
std::string load_error(const std::string& yaml, int line, const std::string& key, const std::string& value,
                  const std::string& what, ErrorCode code = ErrorCode::kInvalidArgument) {
  Result<LoadedConfig> config = load_config_string(yaml, "t.yaml");
  INFO(yaml);
  REQUIRE_FALSE(config.ok());
  const std::string& message = config.status().message();
  INFO(message);
  CHECK(config.status().code() == code);
  CHECK(message.starts_with(fmt::format("t.yaml:{}: ", line)));
  CHECK(message.find(key) != std::string::npos);
  CHECK(message.find("'" + value + "'") != std::string::npos);
  CHECK(message.find(what) != std::string::npos);
  return message;
}

const ConfigValue& setting(const LoadedConfig& config, const std::string& key) {
  for (const ConfigValue& v : config.settings) {
    if (v.key == key) return v;
  }
  FAIL("no setting " << key);
  throw std::logic_error("unreachable");
}

// A policy an embedder might register: flushes after every append.
class RecordingPolicy final : public SyncPolicy {
 public:
  std::string_view name() const override { return "config_test_custom"; }
  ProducerAction after_append(const ProducerView&) const override { return ProducerAction::kRequestSyncAndWait; }
  SyncPlan plan(const SyncState&) override { return {}; }
};

PolicySettings g_custom_settings;  // what the custom factory was given last

void register_test_policies() {
  static const bool registered = [] {
    PolicyRegistry::global()
        .add("config_test_custom",
             [](const PolicySettings& s) -> Result<std::unique_ptr<SyncPolicy>> {
               g_custom_settings = s;
               if (s.latency_cap > milliseconds(50)) {
                 return Status::invalid_argument("commitlog_ext_adaptive_latency_cap must be at most 50ms");
               }
               return std::unique_ptr<SyncPolicy>(new RecordingPolicy);
             })
        .ignore();
    PolicyRegistry::global()
        .add("config_test_throws",
             [](const PolicySettings&) -> Result<std::unique_ptr<SyncPolicy>> { throw std::runtime_error("boom"); })
        .ignore();
    return true;
  }();
  (void)registered;
}

struct Fixture {
  const char* file;
  int sync_line, period_line, segment_line, failure_policy_line;
  std::vector<std::pair<std::string, int>> warnings;  // key, line
};

TEST_CASE("config: the five cassandra.yaml fixtures load with Cassandra's defaults") {
  const Fixture fixtures[] = {
      {"cassandra-3.0.yaml", 309, 310, 328, 197, {}},
      // cdc_enabled: false asks for nothing this library does not do: no warning.
      {"cassandra-3.11.yaml", 391, 392, 410, 248, {}},
      {"cassandra-4.0.yaml", 413, 414, 436, 276, {}},
      {"cassandra-4.1-or-5.0.yaml", 496, 498, 522, 350, {}},
      {"cassandra-5.x-trunk.yaml", 612, 614, 638, 466, {}},
  };
  for (const Fixture& f : fixtures) {
    const std::string path = std::string(COMMITLOG_FIXTURES_DIR "/cassandra-yaml/") + f.file;
    INFO(path);
    Result<LoadedConfig> loaded = load_config_file(path);
    INFO(loaded.status().to_string());
    REQUIRE(loaded.ok());
    const LoadedConfig& c = loaded.value();
    CHECK(c.options.sync_policy == "periodic");
    CHECK(c.options.policy.sync_period == milliseconds(10000));
    CHECK(c.options.policy.lag_block == milliseconds(15000));
    CHECK(c.options.segment_size == 32 * kMiB);
    CHECK(c.options.effective_max_mutation_size() == 16 * kMiB);
    CHECK(c.options.commit_failure_policy == CommitFailurePolicy::kStop);
    CHECK(c.options.compression == Compression::kNone);
    CHECK(c.options.directory == "data/commitlog");

    CHECK(setting(c, "commitlog_sync").line == f.sync_line);
    CHECK(setting(c, "commitlog_sync_period").line == f.period_line);
    CHECK(setting(c, "commitlog_sync_period").value == "10000ms");
    CHECK(setting(c, "commitlog_segment_size").line == f.segment_line);
    CHECK(setting(c, "commitlog_segment_size").value == "32MiB");
    CHECK(setting(c, "commit_failure_policy").line == f.failure_policy_line);
    CHECK(setting(c, "periodic_commitlog_sync_lag_block").source == ConfigSource::kDefault);
    CHECK(setting(c, "periodic_commitlog_sync_lag_block").value == "15000ms");

    REQUIRE(c.warnings.size() == f.warnings.size());
    for (size_t i = 0; i < f.warnings.size(); ++i) {
      CHECK(c.warnings[i].find(f.warnings[i].first) != std::string::npos);
      CHECK(c.warnings[i].starts_with(fmt::format("{}:{}: ", path, f.warnings[i].second)));
    }
  }
}

TEST_CASE("config: conf/commitlog.yaml loads without warnings and gives the defaults but adaptive") {
  Result<LoadedConfig> loaded = load_config_file(COMMITLOG_SOURCE_DIR "/conf/commitlog.yaml");
  INFO(loaded.status().to_string());
  REQUIRE(loaded.ok());
  const LoadedConfig& c = loaded.value();
  CHECK(c.warnings.empty());
  const LoadedConfig defaults = load_ok("");
  REQUIRE(c.settings.size() == defaults.settings.size());
  for (size_t i = 0; i < c.settings.size(); ++i) {
    INFO(c.settings[i].key);
    CHECK(c.settings[i].key == defaults.settings[i].key);
    if (c.settings[i].key != "commitlog_sync") CHECK(c.settings[i].value == defaults.settings[i].value);
  }
  CHECK(defaults.options.sync_policy == "periodic");
  CHECK(c.options.sync_policy == "adaptive");
  CHECK(c.options.policy.sync_period == milliseconds(10000));
  CHECK(c.options.policy.lag_block == milliseconds(15000));
  CHECK(c.options.policy.marker_interval == milliseconds(100));
  CHECK(c.options.policy.latency_cap == milliseconds(2));
  CHECK(c.options.segment_size == 32 * kMiB);
  CHECK_FALSE(c.options.max_mutation_size.has_value());
  // Every key the file sets is documented in it with its default.
  CHECK(setting(c, "commitlog_sync").source == ConfigSource::kFile);
  CHECK(setting(c, "commitlog_ext_marker_interval").source == ConfigSource::kFile);
}

TEST_CASE("config: every key in its new and its old style") {
  struct Case {
    std::string yaml;
    std::string key;
    std::string value;  // effective value as printed
    int line = 1;
  };
  const Case cases[] = {
      {"commitlog_directory: /var/lib/x", "commitlog_directory", "/var/lib/x"},
      {"commitlog_sync: batch", "commitlog_sync", "batch"},
      {"commitlog_sync_period: 2s", "commitlog_sync_period", "2000ms"},
      {"commitlog_sync_period_in_ms: 2000", "commitlog_sync_period", "2000ms"},
      {"commitlog_sync: group\ncommitlog_sync_group_window: 15ms", "commitlog_sync_group_window",
       "15ms", 2},
      {"commitlog_sync: group\ncommitlog_sync_group_window_in_ms: 15",
       "commitlog_sync_group_window", "15ms", 2},
      {"commitlog_sync: group\ncommitlog_sync_group_window_in_ms: 0.5",
       "commitlog_sync_group_window", "500us", 2},
      {"periodic_commitlog_sync_lag_block: 1m", "periodic_commitlog_sync_lag_block", "60000ms"},
      {"periodic_commitlog_sync_lag_block_in_ms: 60000", "periodic_commitlog_sync_lag_block",
       "60000ms"},
      {"commitlog_segment_size: 1GiB", "commitlog_segment_size", "1024MiB"},
      {"commitlog_segment_size_in_mb: 64", "commitlog_segment_size", "64MiB"},
      {"max_mutation_size: 512KiB", "max_mutation_size", "512KiB"},
      {"max_mutation_size_in_kb: 2048", "max_mutation_size", "2MiB"},
      {"commitlog_total_space: 8192MiB", "commitlog_total_space", "8192MiB"},
      {"commitlog_total_space_in_mb: 8192", "commitlog_total_space", "8192MiB"},
      {"commitlog_compression:\n  class_name: LZ4Compressor", "commitlog_compression",
       "{class_name: LZ4Compressor}"},
      {"commitlog_compression:\n  - class_name: LZ4\n    parameters:\n        -",
       "commitlog_compression", "{class_name: LZ4Compressor}"},
      {"commit_failure_policy: stop_commit", "commit_failure_policy", "stop_commit"},
      {"commit_failure_policy: die", "commit_failure_policy", "die"},
      {"commit_failure_policy: ignore", "commit_failure_policy", "ignore"},
      {"commitlog_ext_marker_interval: 250us", "commitlog_ext_marker_interval", "250us"},
      {"commitlog_ext_adaptive_latency_cap: 1500\xc2\xb5s", "commitlog_ext_adaptive_latency_cap",
       "1500us"},
      {"commitlog_ext_adaptive_latency_cap: 1h", "commitlog_ext_adaptive_latency_cap", "3600000ms"},
      {"commitlog_ext_spin_wait: 50us", "commitlog_ext_spin_wait", "50us"},
      {"commitlog_ext_spin_wait: 0ms", "commitlog_ext_spin_wait", "0ms"},
  };
  for (const Case& c : cases) {
    INFO(c.yaml);
    const LoadedConfig config = load_ok(c.yaml);
    const ConfigValue& v = setting(config, c.key);
    CHECK(v.value == c.value);
    CHECK(v.source == ConfigSource::kFile);
    CHECK(v.line == c.line);
    CHECK(config.warnings.empty());
  }
  CHECK(load_ok("commitlog_sync_period_in_ms: 2000").options.policy.sync_period == milliseconds(2000));
  CHECK(load_ok("commitlog_segment_size_in_mb: 64").options.segment_size == 64 * kMiB);
  CHECK(load_ok("max_mutation_size_in_kb: 2048").options.max_mutation_size == 2 * kMiB);
  CHECK(load_ok("commitlog_total_space_in_mb: 100").options.total_space == 100 * kMiB);
  CHECK(load_ok("commitlog_compression: {class_name: LZ4Compressor}").options.compression == Compression::kLz4);
  CHECK(load_ok("commit_failure_policy: die").options.commit_failure_policy == CommitFailurePolicy::kDie);
  CHECK(load_ok("commitlog_ext_marker_interval: 250us").options.policy.marker_interval == microseconds(250));
  CHECK(load_ok("commitlog_max_compression_buffers_in_pool: 5").options.max_compression_buffers_in_pool == 5);
  CHECK(load_ok("").options.max_compression_buffers_in_pool == 3);
  load_error("commitlog_max_compression_buffers_in_pool: 0", 1, "commitlog_max_compression_buffers_in_pool", "0",
             "must be from 1 to 1024");
  load_error("commitlog_max_compression_buffers_in_pool: lots", 1, "commitlog_max_compression_buffers_in_pool",
             "lots", "whole number");
  CHECK(load_ok("commitlog_ext_spin_wait: 1ms").options.spin_wait == milliseconds(1));
  CHECK(load_ok("commitlog_ext_spin_wait: 0ms").options.spin_wait == Duration::zero());
  load_error("commitlog_ext_spin_wait: 11ms", 1, "commitlog_ext_spin_wait", "11ms",
             "between 0ms (never spin) and 10ms");
  load_error("commitlog_ext_spin_wait: -1us", 1, "commitlog_ext_spin_wait", "-1us", "is negative");
}

TEST_CASE("config: duration and size syntax") {
  namespace cv = config_values;
  const cv::DurationLimits any{std::chrono::nanoseconds(1), INT64_MAX};
  CHECK(cv::parse_duration("2d", any).value() == std::chrono::hours(48));
  CHECK(cv::parse_duration("3h", any).value() == std::chrono::hours(3));
  CHECK(cv::parse_duration("4m", any).value() == std::chrono::minutes(4));
  CHECK(cv::parse_duration("5s", any).value() == std::chrono::seconds(5));
  CHECK(cv::parse_duration("6ms", any).value() == milliseconds(6));
  CHECK(cv::parse_duration("7us", any).value() == microseconds(7));
  CHECK(cv::parse_duration("8\xc2\xb5s", any).value() == microseconds(8));
  CHECK(cv::parse_duration("9ns", any).value() == std::chrono::nanoseconds(9));
  CHECK(cv::parse_duration("0ms", any).value() == Duration::zero());
  for (const char* bad : {"", "ms", "10", "10 ms", "10MS", "1.5s", "+5s", "10sec", "s10", "10ms "}) {
    INFO(bad);
    CHECK_FALSE(cv::parse_duration(bad, any).ok());
  }
  CHECK(cv::parse_duration("-1s", any).status().message() == "is negative");
  CHECK(cv::parse_duration("99999999999999999999999ns", any).status().message().starts_with("is too large"));
  CHECK(cv::parse_duration("2147483647ms", {}).ok());
  CHECK_FALSE(cv::parse_duration("2147483648ms", {}).ok());
  CHECK(cv::parse_duration("10us", {}).status().message().find("smallest unit") != std::string::npos);

  CHECK(cv::parse_size("2GiB", {}).value() == 2048 * kMiB);
  CHECK(cv::parse_size("3MiB", {}).value() == 3 * kMiB);
  CHECK(cv::parse_size("4KiB", {kKiB}).value() == 4 * kKiB);
  CHECK(cv::parse_size("5B", {1}).value() == 5);
  CHECK_FALSE(cv::parse_size("4KiB", {}).ok());  // MiB is the smallest by default
  for (const char* bad : {"32MB", "32mib", "32", "32 MiB", "0.5GiB", "MiB"}) {
    INFO(bad);
    CHECK_FALSE(cv::parse_size(bad, {}).ok());
  }
  CHECK(cv::format_duration(milliseconds(10000)) == "10000ms");
  CHECK(cv::format_duration(microseconds(1500)) == "1500us");
  CHECK(cv::format_duration(std::chrono::nanoseconds(7)) == "7ns");
  CHECK(cv::format_size(32 * kMiB) == "32MiB");
  CHECK(cv::format_size(3 * kKiB) == "3KiB");
  CHECK(cv::format_size(5) == "5B");
}

TEST_CASE("config: the old and the new name of one key together are an error") {
  load_error("commitlog_sync_period_in_ms: 10000\ncommitlog_sync_period: 10000ms\n", 2, "commitlog_sync_period_in_ms",
             "10000ms", "keep only commitlog_sync_period");
  load_error("commitlog_segment_size: 32MiB\ncommitlog_segment_size_in_mb: 32\n", 1, "commitlog_segment_size_in_mb",
             "32MiB", "on line 2");
  // An empty old name is unset, so it does not conflict.
  CHECK(load_ok("commitlog_segment_size_in_mb:\ncommitlog_segment_size: 16MiB").options.segment_size == 16 * kMiB);
}

TEST_CASE("config: a wrong type names the key, the value and the line") {
  load_error("commitlog_sync: periodic\ncommitlog_sync_period:\n  a: 1\n", 2, "commitlog_sync_period", "{a: 1}",
             "is a map, expected a duration");
  load_error("\ncommitlog_segment_size: [1, 2]\n", 2, "commitlog_segment_size", "[1, 2]", "is a list");
  load_error("commitlog_sync: {name: batch}\n", 1, "commitlog_sync", "{name: batch}", "expected a sync policy name");
  load_error("commitlog_compression: LZ4Compressor\n", 1, "commitlog_compression", "LZ4Compressor",
             "is a scalar, expected a map");
  Result<LoadedConfig> list = load_config_string("- commitlog_sync: periodic\n", "t.yaml");
  REQUIRE_FALSE(list.ok());
  CHECK(list.status().message() == "t.yaml:1: the top level is a list, expected a map of settings");
}

TEST_CASE("config: a negative value is an error") {
  load_error("commitlog_sync_period: -5ms\n", 1, "commitlog_sync_period", "-5ms", "is negative");
  load_error("x: 1\ncommitlog_segment_size_in_mb: -1\n", 2, "commitlog_segment_size_in_mb", "-1", "is negative");
  load_error("commitlog_sync: group\ncommitlog_sync_group_window_in_ms: -0.5\n", 2,
             "commitlog_sync_group_window_in_ms", "-0.5", "is negative");
}

TEST_CASE("config: an unparseable duration or size is an error") {
  load_error("a: b\n\ncommitlog_sync_period: 10 seconds\n", 3, "commitlog_sync_period", "10 seconds",
             "is not a duration (expected e.g. 10000ms)");
  load_error("commitlog_sync_period: 10000\n", 1, "commitlog_sync_period", "10000", "is not a duration");
  load_error("commitlog_sync_period_in_ms: 10s\n", 1, "commitlog_sync_period_in_ms", "10s", "bare count of ms");
  load_error("commitlog_sync_period: 500us\n", 1, "commitlog_sync_period", "500us", "smallest unit this key accepts is ms");
  load_error("commitlog_sync_period: 3000000000ms\n", 1, "commitlog_sync_period", "3000000000ms", "is too large");
  load_error("commitlog_segment_size: 32MB\n", 1, "commitlog_segment_size", "32MB",
             "is not a size (expected e.g. 32MiB)");
  load_error("commitlog_total_space_in_mb: 1.5\n", 1, "commitlog_total_space_in_mb", "1.5", "not a whole number");
  load_error("max_mutation_size: 100B\n", 1, "max_mutation_size", "100B", "smallest unit this key accepts is KiB");
}

TEST_CASE("config: an unknown policy is an error that lists the known ones") {
  const std::string message =
      load_error("commitlog_sync: periodical\n", 1, "commitlog_sync", "periodical", "unknown sync policy");
  for (const std::string& name : PolicyRegistry::global().names()) CHECK(message.find(name) != std::string::npos);
  load_error("commitlog_sync: ''\n", 1, "commitlog_sync", "", "is empty");
}

TEST_CASE("config: a compressor other than LZ4 is not supported") {
  load_error("commitlog_compression:\n  - class_name: SnappyCompressor\n", 2, "commitlog_compression.class_name",
             "SnappyCompressor", "is not a supported compressor", ErrorCode::kNotSupported);
  load_error("commitlog_compression:\n  parameters: {}\n", 1, "commitlog_compression", "{parameters: {}}",
             "has no class_name");
  load_error("commitlog_compression:\n  class_name: LZ4\n  level: 3\n", 1, "commitlog_compression",
             "{class_name: LZ4, level: 3}",
             "unknown field 'level' on line 3");
  const LoadedConfig c = load_ok("commitlog_compression:\n  class_name: LZ4Compressor\n  parameters:\n"
                                 "    lz4_compressor_type: high\n");
  REQUIRE(c.warnings.size() == 1);
  CHECK(c.warnings[0] == "t.yaml:4: commitlog_compression.parameters.lz4_compressor_type is not supported and is ignored");
}

TEST_CASE("config: commit_failure_policy must be stop, stop_commit, die or ignore") {
  load_error("commit_failure_policy: explode\n", 1, "commit_failure_policy", "explode",
             "expected stop, stop_commit, die or ignore");
  load_error("commit_failure_policy: STOP\n", 1, "commit_failure_policy", "STOP", "is not a commit failure policy");
}

TEST_CASE("config: segment size limits and max_mutation_size") {
  load_error("max_mutation_size: 20MiB\n", 1, "max_mutation_size", "20MiB", "more than half of commitlog_segment_size (32MiB)");
  load_error("commitlog_segment_size: 8MiB\nmax_mutation_size: 4097KiB\n", 2, "max_mutation_size", "4097KiB",
             "more than half");
  CHECK(load_ok("commitlog_segment_size: 8MiB\nmax_mutation_size: 4MiB").options.effective_max_mutation_size() ==
        4 * kMiB);
  load_error("max_mutation_size_in_kb: 0\n", 1, "max_mutation_size_in_kb", "0", "must be greater than 0");
  load_error("commitlog_segment_size: 0MiB\n", 1, "commitlog_segment_size", "0MiB", "at least 4KiB, less than 2048MiB");
  load_error("commitlog_segment_size: 2GiB\n", 1, "commitlog_segment_size", "2GiB", "less than 2048MiB");
  CHECK(load_ok("commitlog_segment_size: 2047MiB").options.segment_size == 2047 * kMiB);
  // Unset, max_mutation_size follows the segment size.
  const LoadedConfig c = load_ok("commitlog_segment_size: 8MiB");
  CHECK(setting(c, "max_mutation_size").value == "4MiB");
  CHECK(setting(c, "max_mutation_size").source == ConfigSource::kDefault);
}

TEST_CASE("config: a yaml syntax error names the file and the line") {
  Result<LoadedConfig> c = load_config_string("commitlog_sync: periodic\ncommitlog_sync_period: [10000ms\n", "t.yaml");
  REQUIRE_FALSE(c.ok());
  INFO(c.status().message());
  CHECK(c.status().code() == ErrorCode::kInvalidArgument);
  CHECK(c.status().message().starts_with("t.yaml:"));
  CHECK(c.status().message().find("yaml syntax error") != std::string::npos);
  Result<LoadedConfig> tab = load_config_string("a: 1\nb: 2\n c: [\n", "t.yaml");
  REQUIRE_FALSE(tab.ok());
  CHECK(tab.status().message().starts_with("t.yaml:3: yaml syntax error"));
  load_error("commitlog_sync: batch\nx: 1\ncommitlog_sync: group\n", 3, "commitlog_sync", "group",
             "second setting of commitlog_sync (the first is on line 1)");
}

TEST_CASE("config: a custom policy registered by the embedder is selected by name") {
  register_test_policies();
  const LoadedConfig c = load_ok("commitlog_sync: config_test_custom\ncommitlog_sync_period: 3s\n");
  CHECK(c.options.sync_policy == "config_test_custom");
  CHECK(setting(c, "commitlog_sync").value == "config_test_custom");
  // Loading does not build the policy: CommitLog::open does, with the loaded settings.
  testing::TempDir dir;
  Options options = c.options;
  options.directory = dir.path();
  auto log = CommitLog::open(options);
  REQUIRE_MESSAGE(log.ok(), log.status().to_string());
  CHECK(g_custom_settings.sync_period == milliseconds(3000));
  CHECK(g_custom_settings.lag_block == milliseconds(4500));
  REQUIRE((*log)->close().ok());
}

TEST_CASE("config: a custom factory's own error and exception come from CommitLog::open") {
  register_test_policies();
  testing::TempDir dir;
  Options capped = load_ok("commitlog_sync: config_test_custom\ncommitlog_ext_adaptive_latency_cap: 1s\n").options;
  capped.directory = dir.path();
  CHECK(CommitLog::open(capped).status().message() == "commitlog_ext_adaptive_latency_cap must be at most 50ms");
  Options throws = load_ok("commitlog_sync: config_test_throws\n").options;
  throws.directory = dir.path();
  auto opened = CommitLog::open(throws);
  REQUIRE_FALSE(opened.ok());
  CHECK(opened.status().message().find("boom") != std::string::npos);
}

TEST_CASE("config: group needs a window") {
  Result<LoadedConfig> c = load_config_string("x: 1\ncommitlog_sync: group\n", "t.yaml");
  REQUIRE_FALSE(c.ok());
  INFO(c.status().message());
  CHECK(c.status().message().starts_with("t.yaml:2: commitlog_sync_group_window must be greater than 0"));
  Result<LoadedConfig> zero = load_config_string("commitlog_sync: group\ncommitlog_sync_group_window: 0ms\n", "t.yaml");
  REQUIRE_FALSE(zero.ok());
  CHECK(zero.status().message().starts_with("t.yaml:2: commitlog_sync_group_window"));
  CHECK(load_ok("commitlog_sync: group\ncommitlog_sync_group_window: 15ms").options.policy.group_window ==
        milliseconds(15));
  // periodic's own requirement, from its factory.
  CHECK_FALSE(load_config_string("commitlog_sync_period: 0ms", "t.yaml").ok());
  // Only the period is named: the lag block it derives is its consequence.
  Result<LoadedConfig> no_period = load_config_string("commitlog_sync: periodic\ncommitlog_sync_period: 0ms\n", "t.yaml");
  REQUIRE_FALSE(no_period.ok());
  CHECK(no_period.status().message() ==
        "t.yaml:2: commitlog_sync_period: '0ms' must be greater than 0 when commitlog_sync is periodic");
}

TEST_CASE("config: effective settings say where each value came from") {
  const LoadedConfig c = load_ok(
      "cluster_name: Test\n"                    // 1: not ours, ignored silently
      "commitlog_sync_period_in_ms: 2000\n"     // 2
      "commitlog_periodic_queue_size: 5\n"      // 3: ours but unsupported
      "commitlog_directory:\n"                  // 4: empty: unset
      "commitlog_sync_batch_window_in_ms: 2\n"  // 5: unsupported
      "periodic_commitlog_sync_lag_block_x: 1\n"  // 6: unsupported
      "commitlog_ext_marker_intervall: 5ms\n"   // 7: a typo of ours
      "commitlog_segment_size: 8MiB\n");        // 8
  REQUIRE(c.settings.size() == 28);
  CHECK(c.settings.front().key == "commitlog_directory");
  CHECK(setting(c, "commitlog_ext_direct_write_threshold").value == "1MiB");
  CHECK(setting(c, "commitlog_ext_spin_wait").value == "0ms");
  CHECK(setting(c, "commitlog_ext_spin_wait").note == "never");
  CHECK(setting(c, "commitlog_ext_file_mode").value == "0600");
  CHECK(setting(c, "commitlog_ext_directory_mode").value == "0700");
  CHECK(c.settings.back().key == "commitlog_ext_cdc_tables");
  CHECK(c.settings.back().value == "");
  CHECK(c.settings.back().note == "every table");
  const ConfigValue& period = setting(c, "commitlog_sync_period");
  CHECK(period.source == ConfigSource::kFile);
  CHECK(period.line == 2);
  CHECK(period.value == "2000ms");
  const ConfigValue& lag = setting(c, "periodic_commitlog_sync_lag_block");
  CHECK(lag.source == ConfigSource::kDefault);
  CHECK(lag.line == 0);
  CHECK(lag.value == "3000ms");
  CHECK(lag.note == "1.5 x commitlog_sync_period");
  CHECK(setting(c, "commitlog_directory").source == ConfigSource::kDefault);
  CHECK(setting(c, "commitlog_directory").value == "data/commitlog");
  CHECK(setting(c, "commitlog_segment_size").line == 8);
  CHECK(setting(c, "max_mutation_size").value == "4MiB");
  CHECK(setting(c, "commitlog_total_space").value == "0MiB");
  CHECK(setting(c, "commitlog_total_space").note == "unlimited");
  CHECK(setting(c, "commitlog_compression").value == "");
  CHECK(setting(c, "commitlog_compression").note == "none");
  REQUIRE(c.warnings.size() == 4);
  CHECK(c.warnings[0] ==
        "t.yaml:3: commitlog_periodic_queue_size is not supported and is ignored: Cassandra 2's queue of periodic appends");
  CHECK(c.warnings[1].starts_with("t.yaml:5: commitlog_sync_batch_window_in_ms "));
  CHECK(c.warnings[2].starts_with("t.yaml:6: periodic_commitlog_sync_lag_block_x "));
  CHECK(c.warnings[3].starts_with("t.yaml:7: commitlog_ext_marker_intervall "));
}

TEST_CASE("config: a file that cannot be read") {
  Result<LoadedConfig> c = load_config_file("/nonexistent/commitlog.yaml");
  REQUIRE_FALSE(c.ok());
  CHECK(c.status().code() == ErrorCode::kNotFound);
  CHECK(c.status().message().starts_with("/nonexistent/commitlog.yaml: "));
}

#ifdef COMMITLOG_CLI
TEST_CASE("config: the `commitlog config` subcommand") {
  const testing::CliResult text = testing::run_cli({"config", COMMITLOG_SOURCE_DIR "/conf/commitlog.yaml"});
  CHECK(text.exit_code == 0);
  CHECK(text.out.find("commitlog_sync_period") != std::string::npos);
  CHECK(text.out.find("commitlog.yaml:") != std::string::npos);
  const testing::CliResult json = testing::run_cli(
      {"config", "--format", "json", COMMITLOG_FIXTURES_DIR "/cassandra-yaml/cassandra-5.x-trunk.yaml"});
  CHECK(json.exit_code == 0);
  CHECK(json.out.find("\"key\": \"commitlog_sync_period\"") != std::string::npos);
  CHECK(json.out.find("\"note\": \"unlimited\"") != std::string::npos);
  CHECK(testing::run_cli({"config", "/nonexistent/commitlog.yaml"}).exit_code == 2);
}

TEST_CASE("config: `commitlog config` refuses an archiving properties file it cannot read, naming key and file") {
  testing::TempDir dir;
  const std::string yaml = dir.file("commitlog.yaml"), properties = dir.file("archiving.properties");
  testing::write_text(yaml, "commitlog_ext_archiving_properties: " + properties + "\n");
  const testing::CliResult missing = testing::run_cli({"config", yaml});
  CHECK(missing.exit_code == 2);
  CHECK(missing.out.empty());
  CHECK(missing.err.starts_with("commitlog config: commitlog_ext_archiving_properties: "));
  CHECK(missing.err.find(properties) != std::string::npos);
  testing::write_text(properties, "archive_command=/bin/cp %path /backup/%name\n");
  const testing::CliResult present = testing::run_cli({"config", yaml});
  CHECK_MESSAGE(present.exit_code == 0, present.err);
}
#endif

}  // namespace
}  // namespace commitlog
