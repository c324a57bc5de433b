// SPDX-License-Identifier: Apache-2.0
#include "tools/lab/bench_payload.h"

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <random>

namespace commitlog::tools {
namespace {

// Enough distinct records that a flush (of up to a few hundred) rarely holds
// one twice, so LZ4 finds only the redundancy within records and across
// their fields; for large sizes, as many as fit in kPoolBytes (at least
// kMinPoolSize), so a 4 MiB point does not build 64 GiB of payloads.
constexpr size_t kPoolSize = 16384;
constexpr size_t kMinPoolSize = 16;
constexpr uint64_t kPoolBytes = uint64_t{256} << 20;

class Generator {
 public:
  explicit Generator(uint64_t seed) : rng_(seed) {}
  // Uniform in [0, n); the raw engine output, so the same on every platform.
  uint64_t below(uint64_t n) { return rng_() % n; }
  char token_char() {
    static constexpr char kChars[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    return kChars[below(sizeof kChars - 1)];
  }

 private:
  std::mt19937_64 rng_;
};

std::string kv_record(Generator& g, size_t length) {
  static constexpr std::array<const char*, 4> kKinds = {"profile", "session", "cart", "settings"};
  static constexpr std::array<const char*, 6> kCountries = {"DE", "FR", "US", "BR", "JP", "IN"};
  static constexpr std::array<const char*, 3> kPlans = {"free", "pro", "team"};
  const uint64_t user = g.below(1000000000);
  std::string r = fmt::format("user:{:09d}:{}=", user, kKinds[g.below(kKinds.size())]);
  r += fmt::format(
      "{{\"id\":{},\"name\":\"user{}\",\"email\":\"user{}@example.com\",\"country\":\"{}\","
      "\"plan\":\"{}\",\"visits\":{},\"last_login\":\"2026-11-{:02d}T{:02d}:{:02d}:{:02d}Z\","
      "\"token\":\"",
      user, user, user, kCountries[g.below(kCountries.size())], kPlans[g.below(kPlans.size())],
      g.below(100000), 1 + g.below(28), g.below(24), g.below(60), g.below(60));
  for (int i = 0; i < 16; ++i) r += g.token_char();
  r += "\"";
  // Longer records carry more of the same: tags, then a free-text note.
  static constexpr std::array<const char*, 8> kWords = {"order",   "shipped", "pending", "refund",
                                                        "premium", "mobile",  "web",     "retry"};
  r += ",\"tags\":[";
  for (int i = 0; r.size() + 2 < length && i < 4; ++i) {
    r += fmt::format("{}\"{}\"", i == 0 ? "" : ",", kWords[g.below(kWords.size())]);
  }
  r += "],\"note\":\"";
  while (r.size() + 2 < length) {
    r += kWords[g.below(kWords.size())];
    r += ' ';
  }
  r += "\"}";
  r.resize(length, ' ');
  return r;
}

}  // namespace

Result<PayloadKind> parse_payload_kind(const std::string& text) {
  if (text == "fill") return PayloadKind::kFill;
  if (text == "random") return PayloadKind::kRandom;
  if (text == "kv") return PayloadKind::kKv;
  return Status::invalid_argument("--payload '" + text + "' is not fill, random or kv");
}

const char* payload_kind_name(PayloadKind kind) {
  switch (kind) {
    case PayloadKind::kFill: return "fill";
    case PayloadKind::kRandom: return "random";
    case PayloadKind::kKv: return "kv";
  }
  return "?";
}

std::vector<std::vector<std::byte>> make_payloads(PayloadKind kind, uint64_t size, uint64_t seed) {
  if (kind == PayloadKind::kFill) return {std::vector<std::byte>(size, std::byte{0x5a})};
  Generator g(seed);
  const uint64_t fit = kPoolBytes / std::max<uint64_t>(size, 1);
  std::vector<std::vector<std::byte>> pool(std::clamp<uint64_t>(fit, kMinPoolSize, kPoolSize));
  for (std::vector<std::byte>& payload : pool) {
    if (kind == PayloadKind::kRandom) {
      payload.resize(size);
      for (std::byte& b : payload) b = static_cast<std::byte>(g.below(256));
      continue;
    }
    const uint64_t length = std::max<uint64_t>(1, size / 2 + g.below(size + 1));
    const std::string record = kv_record(g, length);
    payload.resize(record.size());
    std::transform(record.begin(), record.end(), payload.begin(),
                   [](char c) { return static_cast<std::byte>(c); });
  }
  return pool;
}

}  // namespace commitlog::tools
