// SPDX-License-Identifier: Apache-2.0
#include "tools/kv/kv_store.h"

#include <bit>
#include <charconv>
#include <mutex>

#include "tools/kv/mutation.h"

namespace commitlog::kv {
namespace {

// Redis's rule: the whole value is a decimal 64-bit integer, no spaces or '+'.
std::optional<int64_t> parse_int64(std::string_view s) {
  int64_t value = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return value;
}

template <typename F>
void for_each_shard(uint64_t mask, F&& f) {
  while (mask != 0) {
    f(static_cast<size_t>(std::countr_zero(mask)));
    mask &= mask - 1;
  }
}

}  // namespace

size_t KvStore::shard_of(std::string_view key) {
  // A different mix than the maps' own hash, so one shard's keys still spread.
  return static_cast<size_t>((std::hash<std::string_view>{}(key)*0x9E3779B97F4A7C15ull) >> 58) %
         kShards;
}

void KvStore::lock(ShardMask mask) {
  for_each_shard(mask, [&](size_t i) { shards_[i].mu.lock(); });
}

void KvStore::unlock(ShardMask mask) {
  for_each_shard(mask, [&](size_t i) { shards_[i].mu.unlock(); });
}

Result<Position> KvStore::append(std::string_view payload, ShardMask mask, DurableFence& fence) {
  if (log_ == nullptr) return Status::closed("the commit log is not open");
  const AppendWait wait = wait_later_ ? AppendWait::kNothing : AppendWait::kPolicy;
  auto appended = log_->append(kDataTable, payload, {.wait = wait});
  if (!appended.ok()) return appended.status();
  if (wait_later_) {
    for_each_shard(mask, [&](size_t i) { shards_[i].last_write = *appended; });
    fence.need(*appended);
  }
  return appended;
}

void KvStore::read_fence(const Shard& shard, DurableFence& fence) const {
  if (shard.last_write) fence.need(*shard.last_write);
}

void KvStore::put(Shard& shard, std::string_view key, std::string_view value) {
  auto it = shard.map.find(key);
  if (it == shard.map.end()) {
    shard.map.emplace(std::string(key), std::string(value));
    bytes_.fetch_add(key.size() + value.size(), std::memory_order_relaxed);
  } else {
    bytes_.fetch_add(value.size() - it->second.size(),
                     std::memory_order_relaxed);  // wraps as intended
    it->second.assign(value);
  }
}

bool KvStore::erase(Shard& shard, std::string_view key) {
  auto it = shard.map.find(key);
  if (it == shard.map.end()) return false;
  bytes_.fetch_sub(it->first.size() + it->second.size(), std::memory_order_relaxed);
  shard.map.erase(it);
  return true;
}

Status KvStore::set(std::span<const std::string_view> keys_and_values, DurableFence& fence) {
  ShardMask mask = 0;
  for (size_t i = 0; i + 1 < keys_and_values.size(); i += 2)
    mask |= ShardMask{1} << shard_of(keys_and_values[i]);
  std::string payload;
  encode_set(keys_and_values, &payload);
  lock(mask);
  auto appended = append(payload, mask, fence);
  if (appended.ok()) {
    for (size_t i = 0; i + 1 < keys_and_values.size(); i += 2) {
      put(shards_[shard_of(keys_and_values[i])], keys_and_values[i], keys_and_values[i + 1]);
    }
    writes_.fetch_add(1, std::memory_order_relaxed);
  }
  unlock(mask);
  return appended.status();
}

Result<int64_t> KvStore::del(std::span<const std::string_view> keys, DurableFence& fence) {
  ShardMask mask = 0;
  for (std::string_view key : keys) mask |= ShardMask{1} << shard_of(key);
  lock(mask);
  // The keys DEL removes, in order; a key named twice counts once.
  std::vector<std::string_view> present;
  for (std::string_view key : keys) {
    const Shard& shard = shards_[shard_of(key)];
    if (!shard.map.contains(key)) continue;
    bool seen = false;
    for (std::string_view p : present) seen = seen || p == key;
    if (!seen) present.push_back(key);
  }
  Status status;
  if (present.empty()) {
    for_each_shard(mask, [&](size_t i) { read_fence(shards_[i], fence); });
  } else {
    std::string payload;
    encode_delete(present, &payload);
    auto appended = append(payload, mask, fence);
    status = appended.status();
    if (appended.ok()) {
      for (std::string_view key : present) erase(shards_[shard_of(key)], key);
      writes_.fetch_add(1, std::memory_order_relaxed);
    }
    // A shard whose keys were all absent still answered a read.
    for_each_shard(mask, [&](size_t i) { read_fence(shards_[i], fence); });
  }
  unlock(mask);
  if (!status.ok()) return status;
  return static_cast<int64_t>(present.size());
}

Result<int64_t> KvStore::incr(std::string_view key, DurableFence& fence) {
  const size_t index = shard_of(key);
  Shard& shard = shards_[index];
  std::lock_guard lock(shard.mu);
  int64_t value = 0;
  if (auto it = shard.map.find(key); it != shard.map.end()) {
    auto parsed = parse_int64(it->second);
    if (!parsed) return Status::invalid_argument("value is not an integer or out of range");
    value = *parsed;
  }
  if (__builtin_add_overflow(value, 1, &value)) {
    return Status::invalid_argument("increment or decrement would overflow");
  }
  const std::string text = std::to_string(value);
  const std::string_view pair[2] = {key, text};
  std::string payload;
  encode_set(pair, &payload);
  auto appended = append(payload, ShardMask{1} << index, fence);
  if (!appended.ok()) return appended.status();
  put(shard, key, text);
  writes_.fetch_add(1, std::memory_order_relaxed);
  return value;
}

std::optional<std::string> KvStore::get(std::string_view key, DurableFence& fence) {
  Shard& shard = shards_[shard_of(key)];
  std::lock_guard lock(shard.mu);
  read_fence(shard, fence);
  auto it = shard.map.find(key);
  if (it == shard.map.end()) return std::nullopt;
  return it->second;
}

int64_t KvStore::exists(std::span<const std::string_view> keys, DurableFence& fence) {
  int64_t count = 0;
  for (std::string_view key : keys) {
    Shard& shard = shards_[shard_of(key)];
    std::lock_guard lock(shard.mu);
    read_fence(shard, fence);
    count += shard.map.contains(key) ? 1 : 0;
  }
  return count;
}

size_t KvStore::size(DurableFence& fence) {
  size_t total = 0;
  for (Shard& shard : shards_) {
    std::lock_guard lock(shard.mu);
    read_fence(shard, fence);
    total += shard.map.size();
  }
  return total;
}

void KvStore::load(std::string_view key, std::string_view value) {
  put(shards_[shard_of(key)], key, value);
}

Status KvStore::apply_replayed(std::span<const std::byte> payload) {
  DecodedMutation m;
  CL_RETURN_IF_ERROR(decode(payload, &m));
  switch (m.op) {
    case Op::kSet:
      for (size_t i = 0; i + 1 < m.strings.size(); i += 2) {
        put(shards_[shard_of(m.strings[i])], m.strings[i], m.strings[i + 1]);
      }
      break;
    case Op::kDelete:
      for (std::string_view key : m.strings) erase(shards_[shard_of(key)], key);
      break;
    case Op::kSnapshotMarker: break;
  }
  return {};
}

Result<TableImage> KvStore::capture(uint64_t number) {
  const ShardMask all = ~ShardMask{0} >> (64 - kShards);
  std::string payload;
  encode_marker(number, &payload);
  lock(all);
  DurableFence unused;  // the snapshotter syncs the log itself
  auto marker = append(payload, 0, unused);
  if (!marker.ok()) {
    unlock(all);
    return marker.status();
  }
  TableImage image;
  image.position = *marker;
  for (Shard& shard : shards_) {
    for (const auto& [key, value] : shard.map) image.entries.emplace_back(key, value);
    shard.mu.unlock();
  }
  return image;
}

}  // namespace commitlog::kv
