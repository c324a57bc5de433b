// SPDX-License-Identifier: Apache-2.0
// transparent_data_encryption_options: Cassandra's shape with the file key
// provider, clear errors naming the key, and the yaml round trip.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>

#include "commitlog/config.h"
#include "commitlog/config/config_render.h"
#include "tests/support/load_config.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_keys.h"

namespace commitlog {
namespace {

std::string encryption_yaml(const std::string& key_file, const std::string& extra = "") {
  return "transparent_data_encryption_options:\n  enabled: true\n" + extra +
         "  key_provider:\n    - class_name: FileKeyProvider\n      parameters:\n        - key_file: " + key_file + "\n";
}

std::string load_error(const std::string& yaml) {
  auto loaded = load_config_string(yaml, "t.yaml");
  REQUIRE(!loaded.ok());
  return loaded.status().message();
}

TEST_CASE("encryption config: the file key provider loads its keys, key_alias picks the active one") {
  testing::TempDir dir;
  const std::string keys = testing::write_key_file(dir.path() + "/keys", {1, 2});
  LoadedConfig plain = testing::load_ok(encryption_yaml(keys));
  REQUIRE(plain.options.encryption != nullptr);
  CHECK(plain.options.encryption->active_key_id() == 2);
  LoadedConfig aliased = testing::load_ok(encryption_yaml(keys, "  key_alias: 1\n"));
  CHECK(aliased.options.encryption->active_key_id() == 1);
  // Printed and read back, it is the same setting.
  LoadedConfig again = testing::load_ok(config_as_yaml(aliased, "t.yaml"));
  REQUIRE(again.options.encryption != nullptr);
  CHECK(again.options.encryption->active_key_id() == 1);
  CHECK(again.options.encryption->source() == keys);
}

TEST_CASE("encryption config: a field set twice is an error naming both lines, whichever comes first") {
  testing::TempDir dir;
  const std::string keys = testing::write_key_file(dir.path() + "/keys", {1});
  for (const auto& [first, second] : {std::pair{"false", "true"}, std::pair{"true", "false"}}) {
    const std::string message = load_error("transparent_data_encryption_options:\n  enabled: " + std::string(first) +
                                           "\n  key_provider:\n    - class_name: FileKeyProvider\n      parameters:\n"
                                           "        - key_file: " + keys + "\n  enabled: " + second + "\n");
    CHECK_MESSAGE(message.starts_with("t.yaml:7: transparent_data_encryption_options") , message);
    CHECK_MESSAGE(message.find("sets enabled twice (lines 2 and 7)") != std::string::npos, message);
  }
  // Deeper down too, in lists of maps.
  const std::string nested = load_error(encryption_yaml(keys + "\n          key_file: " + keys));
  CHECK_MESSAGE(nested.find("sets key_provider.parameters.key_file twice") != std::string::npos, nested);
}

TEST_CASE("config: a value quoted in a message is cut short, so an alias bomb costs no time") {
  std::string yaml = "a: &a [x, x, x, x, x, x, x, x, x]\n";
  for (char level = 'b'; level <= 'k'; ++level) {  // 9^10 nodes once the aliases are followed
    const char below = static_cast<char>(level - 1);
    yaml += std::string(1, level) + ": &" + level + " [*" + below;
    for (int i = 0; i < 8; ++i) yaml += std::string(", *") + below;
    yaml += "]\n";
  }
  const std::string message = load_error(yaml + "commitlog_sync: *k\n");
  CHECK_MESSAGE(message.find("(a value of more than 500 items)") != std::string::npos, message);
  // A long value that is right is shown whole.
  std::string tables;
  for (int id = 1; id <= 600; ++id) tables += (tables.empty() ? "" : ", ") + std::to_string(id);
  const LoadedConfig loaded = testing::load_ok("commitlog_ext_cdc_tables: [" + tables + "]\n");
  const auto shown = std::find_if(loaded.settings.begin(), loaded.settings.end(),
                                  [](const ConfigValue& v) { return v.key == "commitlog_ext_cdc_tables"; });
  REQUIRE(shown != loaded.settings.end());
  CHECK(shown->value == "[" + tables + "]");
}

TEST_CASE("encryption config: a JKS keystore, a key file others can read or a missing key are clear errors") {
  testing::TempDir dir;
  const std::string keys = testing::write_key_file(dir.path() + "/keys", {1});
  const std::string jks = load_error(
      "transparent_data_encryption_options:\n  enabled: true\n  key_provider:\n"
      "    - class_name: org.apache.cassandra.security.JKSKeyProvider\n      parameters:\n"
      "        - keystore: conf/.keystore\n");
  CHECK_MESSAGE(jks.find("transparent_data_encryption_options.key_provider.class_name") != std::string::npos, jks);
  CHECK_MESSAGE(jks.find("JKS keystore") != std::string::npos, jks);
  CHECK_MESSAGE(jks.find("supported: FileKeyProvider") != std::string::npos, jks);
  CHECK(load_error(encryption_yaml(keys, "  key_alias: testing:1\n")).find("key_alias") != std::string::npos);
  CHECK(load_error(encryption_yaml(keys, "  key_alias: 7\n")).find("has no key 7") != std::string::npos);
  std::filesystem::permissions(keys, std::filesystem::perms::others_read, std::filesystem::perm_options::add);
  const std::string open = load_error(encryption_yaml(keys));
  CHECK_MESSAGE(open.find(keys + " has mode 0604") != std::string::npos, open);
  CHECK_MESSAGE(open.find("transparent_data_encryption_options") != std::string::npos, open);
}

TEST_CASE("encryption config: disabled, cassandra.yaml's block asks for nothing") {
  LoadedConfig off = testing::load_ok(
      "transparent_data_encryption_options:\n  enabled: false\n  cipher: AES/CBC/PKCS5Padding\n"
      "  key_provider:\n    - class_name: org.apache.cassandra.security.JKSKeyProvider\n");
  CHECK(off.options.encryption == nullptr);
  CHECK(off.warnings.empty());
}

TEST_CASE("encryption config: encrypted segments may be mapped, unless compressed too") {
  testing::TempDir dir;
  const std::string keys = testing::write_key_file(dir.path() + "/keys", {1});
  LoadedConfig mapped = testing::load_ok(encryption_yaml(keys) + "commitlog_disk_access_mode: mmap\n");
  CHECK(mapped.options.disk_access_mode == DiskAccessMode::kMmap);
  CHECK(mapped.options.encryption != nullptr);
  const std::string compressed = load_error(encryption_yaml(keys) + "commitlog_disk_access_mode: mmap\n" +
                                            "commitlog_compression:\n  class_name: LZ4Compressor\n");
  CHECK_MESSAGE(compressed.find("cannot write compressed segments") != std::string::npos, compressed);
}

}  // namespace
}  // namespace commitlog
