// SPDX-License-Identifier: Apache-2.0
// The built-in KeyProvider: master keys from a file (include/commitlog/key_provider.h).
#include <openssl/crypto.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <map>
#include <span>
#include <string_view>

#include "commitlog/key_provider.h"

namespace commitlog {
namespace {

class FileKeyProvider final : public KeyProvider {
 public:
  FileKeyProvider(std::string path, std::map<uint32_t, MasterKey> keys, uint32_t active)
      : path_(std::move(path)), keys_(std::move(keys)), active_(active) {}
  ~FileKeyProvider() override {
    for (auto& [id, key] : keys_) OPENSSL_cleanse(key.data(), key.size());
  }
  uint32_t active_key_id() const override { return active_; }
  Result<MasterKey> key(uint32_t id) const override {
    const auto it = keys_.find(id);
    if (it == keys_.end()) return Status::not_found("key file " + path_ + " has no key " + std::to_string(id));
    return it->second;
  }
  std::vector<uint32_t> key_ids() const override {
    std::vector<uint32_t> ids;
    for (const auto& [id, key] : keys_) ids.push_back(id);
    return ids;
  }
  std::string source() const override { return path_; }

 private:
  const std::string path_;
  std::map<uint32_t, MasterKey> keys_;
  const uint32_t active_;
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// "<id> <64 hex digits>" into `keys`; "" when it is one, else what is wrong.
std::string parse_line(std::string_view line, std::map<uint32_t, MasterKey>& keys) {
  const size_t space = line.find_first_of(" \t");
  if (space == std::string_view::npos) return "expected '<id> <64 hex digits>'";
  const std::string_view id_text = line.substr(0, space);
  const std::string_view hex = trim(line.substr(space));
  uint32_t id = 0;
  const auto [end, ec] = std::from_chars(id_text.data(), id_text.data() + id_text.size(), id);
  if (ec != std::errc() || end != id_text.data() + id_text.size()) return "the id is not a decimal number below 2^32";
  if (hex.size() != 64) return "the key is not 64 hex digits";
  MasterKey key;
  for (size_t i = 0; i < key.size(); ++i) {
    const int hi = hex_digit(hex[2 * i]), lo = hex_digit(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return "the key is not 64 hex digits";
    key[i] = static_cast<std::byte>(hi << 4 | lo);
  }
  if (!keys.emplace(id, key).second) return "key " + std::to_string(id) + " appears twice";
  return "";
}

}  // namespace

Result<std::shared_ptr<const KeyProvider>> load_key_file(const std::string& path, std::optional<uint32_t> active,
                                                        FileSystem& fs) {
  // A key readable by others protects nothing: refused before it is read.
  auto mode = fs.permission_bits(path);
  if (!mode.ok()) return mode.status();
  if ((*mode & 077) != 0) {
    char octal[16];
    std::snprintf(octal, sizeof octal, "%04o", *mode);
    return Status::invalid_argument("key file " + path + " has mode " + octal +
                                    ": it must not be readable by group or others (chmod 600)");
  }
  auto file = fs.open(path, OpenMode::kRead);
  if (!file.ok()) return file.status();
  auto size = (*file)->size();
  if (!size.ok()) return size.status();
  if (*size > (1u << 20)) return Status::invalid_argument("key file " + path + " is larger than 1 MiB");
  std::string text(*size, '\0');
  auto got = (*file)->read_at(0, std::as_writable_bytes(std::span(text)));
  if (!got.ok()) return got.status();
  text.resize(*got);

  std::map<uint32_t, MasterKey> keys;
  std::string problem;
  size_t number = 0;
  for (size_t at = 0; at < text.size() && problem.empty();) {
    const size_t eol = std::min(text.find('\n', at), text.size());
    const std::string_view line = trim(std::string_view(text).substr(at, eol - at));
    ++number;
    at = eol + 1;
    if (line.empty() || line.front() == '#') continue;
    if (std::string why = parse_line(line, keys); !why.empty()) {
      problem = "key file " + path + " line " + std::to_string(number) + ": " + why;
    }
  }
  OPENSSL_cleanse(text.data(), text.size());
  std::unique_ptr<FileKeyProvider> provider;
  if (problem.empty() && keys.empty()) problem = "key file " + path + " holds no key";
  if (problem.empty() && active && keys.count(*active) == 0) {
    problem = "key file " + path + " has no key " + std::to_string(*active) + " (the key_alias)";
  }
  if (problem.empty()) {
    const uint32_t id = active ? *active : keys.rbegin()->first;
    provider = std::make_unique<FileKeyProvider>(path, std::move(keys), id);
  }
  for (auto& [id, key] : keys) OPENSSL_cleanse(key.data(), key.size());
  if (!problem.empty()) return Status::invalid_argument(problem);
  return std::shared_ptr<const KeyProvider>(std::move(provider));
}

}  // namespace commitlog
