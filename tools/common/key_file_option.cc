// SPDX-License-Identifier: Apache-2.0
#include "tools/common/key_file_option.h"

namespace commitlog::tools {

CLI::Option* add_key_file_option(CLI::App* cmd, std::string* path) {
  return cmd->add_option("--key-file", *path,
                         "master keys of an encrypted log: lines '<id> <64 hex digits>', mode 0600 "
                         "(docs/encryption.md)")
      ->type_name("FILE");
}

Result<std::shared_ptr<const KeyProvider>> load_key_file_option(const std::string& path) {
  if (path.empty()) return std::shared_ptr<const KeyProvider>();
  auto keys = load_key_file(path);
  if (!keys.ok()) return Status(keys.status().code(), "--key-file: " + keys.status().message());
  return keys;
}

}  // namespace commitlog::tools
