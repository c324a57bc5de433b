// SPDX-License-Identifier: Apache-2.0
#include "tools/kv/kv_store.h"

#include <random>
#include <unordered_set>

#include "tools/kv/glob.h"
#include "tools/kv/mutation.h"
#include "tools/kv/resp.h"
#include "tools/kv/value.h"

namespace commitlog::kv {
namespace {

// SCAN cursors remembered at once, and the bytes of the keys they hold (a
// key may be megabytes); the oldest is forgotten first.
constexpr size_t kMaxCursors = 4096;
constexpr uint64_t kMaxCursorBytes = 64 << 20;

// EXPIRE's conditions for a key expiring at `current` (0: never) and the
// new expiry `at`, as Redis 7 checks them.
bool expire_allowed(const ExpireIf& only_if, int64_t current, int64_t at) {
  if (only_if.nx && current != 0) return false;
  if (only_if.xx && current == 0) return false;
  if (only_if.gt && (current == 0 || at <= current)) return false;
  if (only_if.lt && current != 0 && at >= current) return false;
  return true;
}

EngineWrite put(std::string_view key, std::string value) {
  return {EngineWrite::Kind::kPut, std::string(key), std::move(value)};
}

// The first SCAN cursor of this process: 31 random bits above 2^32 numbers
// of its own, below 2^63 for clients that hold cursors as signed integers.
uint64_t first_cursor() {
  const uint64_t epoch = std::random_device()() & 0x7fffffffu;
  return epoch << 32 | 1;
}

}  // namespace

KvStore::KvStore(std::function<int64_t()> now_ms)
    : now_ms_(std::move(now_ms)), next_cursor_(first_cursor()) {}

void KvStore::read_fence(DurableFence& fence) {
  std::lock_guard lock(last_mu_);
  if (last_write_) fence.need(*last_write_);
}

Status KvStore::commit(std::span<const EngineWrite> writes, DurableFence& fence) {
  if (engine_ == nullptr) return Status::closed("the store is not open");
  std::optional<Position> at;
  if (log_ != nullptr) {
    std::string payload;
    encode_writes(writes, &payload);
    const AppendWait wait = wait_later_ ? AppendWait::kNothing : AppendWait::kPolicy;
    auto appended = log_->append(kDataTable, payload, {.wait = wait});
    if (!appended.ok()) {
      if (appended.status().code() != ErrorCode::kInvalidArgument) failed_.store(true);
      return appended.status();
    }
    at = *appended;
  } else if (engine_->own_wal()) {
    at = Position{0, ++wal_writes_};  // the reference mode's numbering (engine.h)
  }
  if (wait_later_) {
    // Before the apply: a read that sees the value also sees this.
    std::lock_guard lock(last_mu_);
    last_write_ = at;
  }
  if (Status applied = engine_->apply(writes, at); !applied.ok()) {
    failed_.store(true);
    return applied;
  }
  if (wait_later_) fence.need(*at);
  writes_.fetch_add(1, std::memory_order_relaxed);
  return {};
}

Result<std::optional<std::string>> KvStore::live(std::string_view key, bool locked) {
  if (engine_ == nullptr) return Status::closed("the store is not open");
  auto stored = engine_->get(key);
  if (!stored.ok() || !*stored) return stored;
  auto value = decode_value(**stored);
  if (!value) return Status::corruption("a stored value shorter than its header");
  if (!value->expired(now_ms_())) return stored;
  if (locked) {
    const EngineWrite gone{EngineWrite::Kind::kDelete, std::string(key), {}};
    CL_RETURN_IF_ERROR(engine_->apply(std::span(&gone, 1), std::nullopt));
  } else {
    std::lock_guard lock(mu_);
    (void)live(key, true);  // removal is best effort: the key stays expired either way
  }
  return std::optional<std::string>();
}

Result<SetResult> KvStore::set(std::string_view key, std::string_view value,
                               const SetOptions& options, DurableFence& fence) {
  std::lock_guard lock(mu_);
  SetResult result;
  std::optional<std::string> old;
  if (options.when != SetOptions::When::kAlways || options.get || options.keep_ttl) {
    auto current = live(key, true);
    if (!current.ok()) return current.status();
    old = std::move(current).value();
  }
  if (options.get && old) result.old = std::string(decode_value(*old)->data);
  const bool present = old.has_value();
  if ((options.when == SetOptions::When::kIfAbsent && present) ||
      (options.when == SetOptions::When::kIfPresent && !present)) {
    read_fence(fence);
    return result;
  }
  int64_t expiry = options.expire_at_ms.value_or(0);
  if (options.keep_ttl && old) expiry = decode_value(*old)->expire_at_ms;
  const EngineWrite w = put(key, encode_value(expiry, value));
  CL_RETURN_IF_ERROR(commit(std::span(&w, 1), fence));
  result.written = true;
  return result;
}

Status KvStore::mset(std::span<const std::string_view> keys_and_values, DurableFence& fence) {
  std::vector<EngineWrite> writes;
  for (size_t i = 0; i + 1 < keys_and_values.size(); i += 2)
    writes.push_back(put(keys_and_values[i], encode_value(0, keys_and_values[i + 1])));
  std::lock_guard lock(mu_);
  return commit(writes, fence);
}

Result<int64_t> KvStore::del(std::span<const std::string_view> keys, DurableFence& fence) {
  std::lock_guard lock(mu_);
  std::vector<EngineWrite> writes;
  std::unordered_set<std::string_view> seen;
  for (std::string_view key : keys) {
    if (!seen.insert(key).second) continue;
    auto current = live(key, true);
    if (!current.ok()) return current.status();
    if (*current) writes.push_back({EngineWrite::Kind::kDelete, std::string(key), {}});
  }
  if (writes.empty()) {
    read_fence(fence);
    return int64_t{0};
  }
  CL_RETURN_IF_ERROR(commit(writes, fence));
  return static_cast<int64_t>(writes.size());
}

Result<std::optional<std::string>> KvStore::getdel(std::string_view key, DurableFence& fence) {
  std::lock_guard lock(mu_);
  auto current = live(key, true);
  if (!current.ok() || !*current) {
    read_fence(fence);
    return current;
  }
  const EngineWrite w{EngineWrite::Kind::kDelete, std::string(key), {}};
  CL_RETURN_IF_ERROR(commit(std::span(&w, 1), fence));
  return std::optional<std::string>(std::string(decode_value(**current)->data));
}

Result<int64_t> KvStore::incr_by(std::string_view key, int64_t delta, DurableFence& fence) {
  std::lock_guard lock(mu_);
  auto current = live(key, true);
  if (!current.ok()) return current.status();
  int64_t value = 0;
  int64_t expiry = 0;
  if (*current) {
    const StoredValue v = *decode_value(**current);
    auto parsed = resp::parse_integer(v.data);
    if (!parsed) return Status::invalid_argument("value is not an integer or out of range");
    value = *parsed;
    expiry = v.expire_at_ms;
  }
  if (__builtin_add_overflow(value, delta, &value))
    return Status::invalid_argument("increment or decrement would overflow");
  const EngineWrite w = put(key, encode_value(expiry, std::to_string(value)));
  CL_RETURN_IF_ERROR(commit(std::span(&w, 1), fence));
  return value;
}

Result<int64_t> KvStore::append(std::string_view key, std::string_view value, DurableFence& fence) {
  std::lock_guard lock(mu_);
  auto current = live(key, true);
  if (!current.ok()) return current.status();
  std::string stored = *current ? std::move(**current) : encode_value(0, {});
  stored.append(value);
  const auto length = static_cast<int64_t>(stored.size() - 8);
  const EngineWrite w = put(key, std::move(stored));
  CL_RETURN_IF_ERROR(commit(std::span(&w, 1), fence));
  return length;
}

Result<bool> KvStore::expire_at(std::string_view key, std::optional<int64_t> at_ms,
                                DurableFence& fence, const ExpireIf& only_if) {
  std::lock_guard lock(mu_);
  auto current = live(key, true);
  if (!current.ok()) return current.status();
  if (!*current) {
    read_fence(fence);
    return false;
  }
  const StoredValue v = *decode_value(**current);
  if ((!at_ms && v.expire_at_ms == 0) || (at_ms && !expire_allowed(only_if, v.expire_at_ms, *at_ms))) {
    read_fence(fence);
    return false;
  }
  // An expiry in the past deletes the key, as in Redis.
  EngineWrite w = put(key, encode_value(at_ms.value_or(0), v.data));
  if (at_ms && *at_ms <= now_ms_()) w = {EngineWrite::Kind::kDelete, std::string(key), {}};
  CL_RETURN_IF_ERROR(commit(std::span(&w, 1), fence));
  return true;
}

Status KvStore::flushall(DurableFence& fence) {
  std::lock_guard lock(mu_);
  const EngineWrite w{EngineWrite::Kind::kClear, {}, {}};
  return commit(std::span(&w, 1), fence);
}

Result<std::optional<std::string>> KvStore::get(std::string_view key, DurableFence& fence) {
  auto current = live(key, false);
  read_fence(fence);
  if (!current.ok() || !*current) return current;
  return std::optional<std::string>(std::string(decode_value(**current)->data));
}

Result<int64_t> KvStore::pttl(std::string_view key, DurableFence& fence) {
  auto current = live(key, false);
  read_fence(fence);
  if (!current.ok()) return current.status();
  if (!*current) return int64_t{-2};
  const StoredValue v = *decode_value(**current);
  if (v.expire_at_ms == 0) return int64_t{-1};
  return std::max<int64_t>(0, v.expire_at_ms - now_ms_());
}

Result<int64_t> KvStore::exists(std::span<const std::string_view> keys, DurableFence& fence) {
  int64_t count = 0;
  for (std::string_view key : keys) {
    auto current = live(key, false);
    if (!current.ok()) return current.status();
    count += *current ? 1 : 0;
  }
  read_fence(fence);
  return count;
}

Result<uint64_t> KvStore::scan(uint64_t cursor, std::optional<std::string_view> pattern,
                               uint64_t count, std::vector<std::string>* keys, DurableFence& fence) {
  std::optional<std::string> after;
  if (cursor != 0) {
    std::lock_guard lock(cursor_mu_);
    auto it = cursors_.find(cursor);
    if (it == cursors_.end()) return Status::invalid_argument("invalid cursor");
    after = it->second;
  }
  read_fence(fence);
  const int64_t now = now_ms_();
  uint64_t visited = 0;
  std::string last;
  bool more = false;
  Status status = engine_->scan(after, [&](std::string_view key, std::string_view stored) {
    if (visited == count) {
      more = true;
      return false;
    }
    ++visited;
    last.assign(key);
    auto v = decode_value(stored);
    if (v && !v->expired(now) && (!pattern || glob_match(*pattern, key)))
      keys->emplace_back(key);
    return true;
  });
  CL_RETURN_IF_ERROR(status);
  if (!more) return uint64_t{0};
  std::lock_guard lock(cursor_mu_);
  while (!cursors_.empty() &&
         (cursors_.size() >= kMaxCursors || cursor_bytes_ + last.size() > kMaxCursorBytes)) {
    cursor_bytes_ -= cursors_.begin()->second.size();
    cursors_.erase(cursors_.begin());
  }
  const uint64_t next = next_cursor_++;
  cursor_bytes_ += last.size();
  cursors_.emplace(next, std::move(last));
  return next;
}

Result<KvStore::KeyCount> KvStore::count_keys(DurableFence& fence) {
  read_fence(fence);
  KeyCount count;
  const int64_t now = now_ms_();
  CL_RETURN_IF_ERROR(engine_->scan(std::nullopt, [&](std::string_view, std::string_view stored) {
    auto v = decode_value(stored);
    if (!v || v->expired(now)) return true;
    ++count.keys;
    count.expiring += v->expire_at_ms != 0 ? 1 : 0;
    return true;
  }));
  return count;
}

Status KvStore::durable_all(DurableFence& fence) {
  if (wait_later_) {
    read_fence(fence);
    return {};
  }
  return log_ != nullptr ? log_->sync() : Status{};
}

Status KvStore::apply_replayed(std::span<const std::byte> payload, Position position) {
  std::vector<EngineWrite> writes;
  CL_RETURN_IF_ERROR(decode(payload, &writes));
  return engine_->apply(writes, position);
}

}  // namespace commitlog::kv
