// SPDX-License-Identifier: Apache-2.0
// How the store lays out RocksDB's keys and values.
//
//   key "k" + user key   -> value: 8-byte little-endian expiry (ms since the
//                           epoch; 0: none), then the user's bytes
//   key "c"              -> the checkpoint: 8-byte segment, 8-byte offset
//                           (little-endian) of the last log mutation applied
//
// The checkpoint is written in the same WriteBatch as the mutation, so a
// flushed memtable holds exactly the mutations up to the checkpoint it holds.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "commitlog/position.h"

namespace commitlog::kv {

inline constexpr char kDataPrefix = 'k';
inline constexpr std::string_view kCheckpointKey = "c";

inline std::string data_key(std::string_view key) {
  std::string out;
  out.reserve(key.size() + 1);
  out.push_back(kDataPrefix);
  out.append(key);
  return out;
}

inline void put_fixed64(uint64_t v, std::string* out) {
  char b[8];
  for (int i = 0; i < 8; ++i) b[i] = static_cast<char>(v >> (8 * i));
  out->append(b, 8);
}

inline uint64_t get_fixed64(std::string_view in) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t{static_cast<uint8_t>(in[i])} << (8 * i);
  return v;
}

// A stored value: the expiry (0: none) and the user's bytes.
inline std::string encode_value(int64_t expire_at_ms, std::string_view data) {
  std::string out;
  out.reserve(8 + data.size());
  put_fixed64(static_cast<uint64_t>(expire_at_ms), &out);
  out.append(data);
  return out;
}

struct StoredValue {
  int64_t expire_at_ms = 0;  // 0: none
  std::string_view data;
  bool expired(int64_t now_ms) const { return expire_at_ms != 0 && expire_at_ms <= now_ms; }
};

// nullopt for a value shorter than its header (never written by the store).
inline std::optional<StoredValue> decode_value(std::string_view stored) {
  if (stored.size() < 8) return std::nullopt;
  return StoredValue{static_cast<int64_t>(get_fixed64(stored)), stored.substr(8)};
}

inline std::string encode_checkpoint(Position p) {
  std::string out;
  put_fixed64(p.segment, &out);
  put_fixed64(p.offset, &out);
  return out;
}

inline std::optional<Position> decode_checkpoint(std::string_view in) {
  if (in.size() != 16) return std::nullopt;
  return Position{get_fixed64(in), get_fixed64(in.substr(8))};
}

}  // namespace commitlog::kv
