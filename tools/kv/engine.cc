// SPDX-License-Identifier: Apache-2.0
#include "tools/kv/engine.h"

#include <atomic>
#include <thread>

#include <rocksdb/compaction_filter.h>
#include <rocksdb/db.h>
#include <rocksdb/listener.h>
#include <rocksdb/sst_file_reader.h>
#include <rocksdb/write_batch.h>

#include "tools/kv/value.h"

namespace commitlog::kv {
namespace {

Status from_rocksdb(const rocksdb::Status& s, std::string_view what) {
  if (s.ok()) return {};
  return Status::io_error(std::string("rocksdb ") + std::string(what) + ": " + s.ToString());
}

// Drops data values whose expiry has passed (a deletion marker where older
// versions may remain below, as RocksDB does for kRemove).
class ExpiryFilter : public rocksdb::CompactionFilter {
 public:
  explicit ExpiryFilter(std::function<int64_t()> now_ms) : now_ms_(std::move(now_ms)) {}
  bool Filter(int, const rocksdb::Slice& key, const rocksdb::Slice& value, std::string*,
              bool*) const override {
    if (key.size() == 0 || key[0] != kDataPrefix) return false;
    auto stored = decode_value(std::string_view(value.data(), value.size()));
    return stored && stored->expired(now_ms_());
  }
  const char* Name() const override { return "commitlog-kv-expiry"; }

 private:
  std::function<int64_t()> now_ms_;
};

}  // namespace

// Reads the checkpoint out of each SST a flush wrote.
class Engine::Listener : public rocksdb::EventListener {
 public:
  explicit Listener(std::function<void(Position)> on_flushed) : on_flushed_(std::move(on_flushed)) {}
  void OnFlushCompleted(rocksdb::DB* db, const rocksdb::FlushJobInfo& info) override {
    flushes_.fetch_add(1, std::memory_order_relaxed);
    if (!on_flushed_) return;
    rocksdb::SstFileReader reader(db->GetOptions());
    if (!reader.Open(info.file_path).ok()) return;  // compacted away already: the next flush covers it
    std::unique_ptr<rocksdb::Iterator> it(reader.NewIterator(rocksdb::ReadOptions()));
    it->Seek(rocksdb::Slice(kCheckpointKey.data(), kCheckpointKey.size()));
    if (!it->Valid() || it->key() != rocksdb::Slice(kCheckpointKey.data(), kCheckpointKey.size()))
      return;
    if (auto p = decode_checkpoint(std::string_view(it->value().data(), it->value().size())))
      on_flushed_(*p);
  }
  std::atomic<uint64_t> flushes_{0};

 private:
  std::function<void(Position)> on_flushed_;
};

Engine::Engine(EngineOptions options) : options_(std::move(options)) {}
Engine::~Engine() = default;

Result<std::unique_ptr<Engine>> Engine::open(EngineOptions options) {
  std::unique_ptr<Engine> engine(new Engine(std::move(options)));
  auto now = engine->options_.now_ms;
  if (!now) return Status::invalid_argument("engine: no clock");
  engine->filter_ = std::make_unique<ExpiryFilter>(now);
  engine->listener_ = std::make_shared<Listener>(engine->options_.on_flushed);
  rocksdb::Options o;
  o.create_if_missing = true;
  o.write_buffer_size = engine->options_.memtable_bytes;
  o.max_write_buffer_number = 4;
  o.compaction_filter = engine->filter_.get();
  o.listeners.push_back(engine->listener_);
  // Without a WAL, a close must not lose the memtables silently: the store
  // flushes before it closes, and the log covers what a crash loses.
  o.avoid_flush_during_shutdown = false;
  rocksdb::DB* db = nullptr;
  CL_RETURN_IF_ERROR(from_rocksdb(rocksdb::DB::Open(o, engine->options_.path, &db), "open"));
  engine->db_.reset(db);
  return engine;
}

Result<std::optional<Position>> Engine::checkpoint() {
  std::string value;
  rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), rocksdb::Slice(kCheckpointKey.data(), 1), &value);
  if (s.IsNotFound()) return std::optional<Position>();
  CL_RETURN_IF_ERROR(from_rocksdb(s, "get checkpoint"));
  auto p = decode_checkpoint(value);
  if (!p) return Status::corruption("rocksdb: the checkpoint key is malformed");
  return std::optional<Position>(*p);
}

Status Engine::apply(std::span<const EngineWrite> writes, std::optional<Position> at) {
  rocksdb::WriteBatch batch;
  for (const EngineWrite& w : writes) {
    switch (w.kind) {
      case EngineWrite::Kind::kPut: batch.Put(data_key(w.key), w.value); break;
      case EngineWrite::Kind::kDelete: batch.Delete(data_key(w.key)); break;
      case EngineWrite::Kind::kClear: {
        const char begin[1] = {kDataPrefix};
        const char end[1] = {kDataPrefix + 1};
        batch.DeleteRange(rocksdb::Slice(begin, 1), rocksdb::Slice(end, 1));
        break;
      }
    }
  }
  if (at && !options_.own_wal) batch.Put(rocksdb::Slice(kCheckpointKey.data(), 1), encode_checkpoint(*at));
  rocksdb::WriteOptions wo;
  wo.disableWAL = !options_.own_wal;
  Status written = from_rocksdb(db_->Write(wo, &batch), "write");
  if (options_.own_wal && at) applied_.store(at->offset, std::memory_order_release);
  return written;
}

Status Engine::sync_wal(Position at) {
  // Only with two or more workers: a write numbered by one thread that
  // another's reader saw first is at most one WriteBatch away.
  while (applied_.load(std::memory_order_acquire) < at.offset) std::this_thread::yield();
  wal_syncs_.fetch_add(1, std::memory_order_relaxed);
  return from_rocksdb(db_->SyncWAL(), "sync WAL");
}

Result<std::optional<std::string>> Engine::get(std::string_view key) {
  std::string value;
  rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), data_key(key), &value);
  if (s.IsNotFound()) return std::optional<std::string>();
  CL_RETURN_IF_ERROR(from_rocksdb(s, "get"));
  return std::optional<std::string>(std::move(value));
}

Status Engine::scan(std::optional<std::string_view> after,
                    const std::function<bool(std::string_view, std::string_view)>& each) {
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
  const std::string start = data_key(after.value_or(std::string_view()));
  it->Seek(start);
  if (after && it->Valid() && it->key() == rocksdb::Slice(start)) it->Next();
  for (; it->Valid(); it->Next()) {
    const rocksdb::Slice k = it->key();
    if (k.size() == 0 || k[0] != kDataPrefix) break;
    if (!each(std::string_view(k.data() + 1, k.size() - 1),
              std::string_view(it->value().data(), it->value().size())))
      break;
  }
  return from_rocksdb(it->status(), "scan");
}

Status Engine::flush() {
  rocksdb::FlushOptions fo;
  fo.wait = true;
  return from_rocksdb(db_->Flush(fo), "flush");
}

uint64_t Engine::property(const std::string& name) {
  uint64_t value = 0;
  return db_->GetIntProperty(name, &value) ? value : 0;
}

uint64_t Engine::flushes() const { return listener_->flushes_.load(std::memory_order_relaxed); }

}  // namespace commitlog::kv
