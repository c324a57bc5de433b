// SPDX-License-Identifier: Apache-2.0
// INFO and CONFIG GET: the fields Redis clients and exporters read, and the
// store's own (kv_*, commitlog_*).
#include <unistd.h>

#include <cstdio>
#include <ctime>

#include <fmt/core.h>

#include "commitlog/metrics.h"
#include "tools/kv/server.h"

namespace commitlog::kv {
namespace {

constexpr uint64_t kCountKeysUpTo = 100'000;

uint64_t resident_bytes() {
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  unsigned long pages = 0, resident = 0;
  const int n = std::fscanf(f, "%lu %lu", &pages, &resident);
  std::fclose(f);
  return n == 2 ? resident * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE)) : 0;
}

// What Redis's appendfsync would be for this durability.
std::string appendfsync(const CommitLog* log, bool reference) {
  if (reference) return "always";
  return log && log->policy_promise().acknowledges_durable ? "always" : "everysec";
}

}  // namespace

std::vector<std::pair<std::string, std::string>> Server::config() const {
  return {
      {"appendonly", "yes"},
      {"appendfsync", appendfsync(log_.get(), options_.reference_rocksdb_wal)},
      {"save", ""},
      {"databases", "1"},
      {"port", std::to_string(listener_.port())},
      {"bind", options_.bind},
      {"dir", options_.dir},
      {"maxclients", std::to_string(options_.clients.max_clients)},
      {"maxmemory", "0"},
      {"maxmemory-policy", "noeviction"},
      {"maxmemory-clients", std::to_string(options_.clients.max_memory)},
      {"timeout", std::to_string(options_.clients.idle_timeout.count() / 1000)},
      {"protected-mode", options_.protected_mode ? "yes" : "no"},
      {"io-threads", std::to_string(options_.threads)},
      {"cluster-enabled", "no"},
      {"commitlog_sync", policy_name_},
  };
}

std::string Server::info(std::span<const std::string_view> sections) {
  auto wanted = [&](std::string_view name) {
    if (sections.empty()) return name != "commitlog";
    for (std::string_view s : sections) {
      if (s == name || s == "all" || s == "everything" || (s == "default" && name != "commitlog"))
        return true;
    }
    return false;
  };
  std::string out;
  auto line = [&](std::string_view key, const auto& value) {
    out += fmt::format("{}:{}\r\n", key, value);
  };
  if (wanted("server")) {
    out += "# Server\r\n";
    line("redis_version", "7.0.0");
    line("redis_mode", "standalone");
    line("commitlog_kv_version", COMMITLOG_VERSION);
    line("os", "Linux");
    line("process_id", ::getpid());
    line("tcp_port", listener_.port());
    line("io_threads_active", 0);
    line("uptime_in_seconds", static_cast<int64_t>(ms_since_start() / 1000));
    line("uptime_in_days", static_cast<int64_t>(ms_since_start() / 86'400'000));
    out += "\r\n";
  }
  if (wanted("clients")) {
    out += "# Clients\r\n";
    line("connected_clients", counters_.connected.load());
    line("blocked_clients", 0);
    line("maxclients", options_.clients.max_clients);
    line("maxmemory_clients", options_.clients.max_memory);
    line("timeout", options_.clients.idle_timeout.count() / 1000.0);
    out += "\r\n";
  }
  if (wanted("memory")) {
    const uint64_t rss = resident_bytes();
    out += "# Memory\r\n";
    line("used_memory", rss);
    line("used_memory_rss", rss);
    line("maxmemory", 0);
    line("maxmemory_policy", "noeviction");
    line("mem_clients_normal", clients_->memory());
    line("kv_rocksdb_memtable_bytes", engine_->property("rocksdb.cur-size-all-mem-tables"));
    line("kv_rocksdb_sst_bytes", engine_->property("rocksdb.total-sst-files-size"));
    out += "\r\n";
  }
  if (wanted("persistence")) out += info_persistence();
  if (wanted("stats")) {
    out += "# Stats\r\n";
    line("total_connections_received", counters_.connections_received.load());
    line("total_commands_processed", counters_.commands.load());
    line("instantaneous_ops_per_sec", 0);
    line("rejected_connections", clients_->rejected());
    line("evicted_clients", clients_->evicted());
    line("expired_keys", 0);
    line("evicted_keys", 0);
    line("keyspace_hits", 0);
    line("keyspace_misses", 0);
    line("kv_idle_clients_closed", clients_->timed_out());
    line("total_protocol_errors", counters_.protocol_errors.load());
    line("total_durability_failures", counters_.durability_failures.load());
    line("total_writes", store_.writes());
    out += "\r\n";
  }
  if (wanted("commitlog") && log_) {
    const MetricsSnapshot m = log_->metrics();
    out += "# Commitlog\r\n";
    line("commitlog_sync", policy_name_);
    line("commitlog_directory", log_dir_);
    auto files = list_segment_files(*options_.log.file_system, log_dir_);
    line("commitlog_segment_files", files.ok() ? files->size() : 0);
    // The sync thread's own counts (CommitLogStats), then the metrics table.
    const CommitLogStats st = log_->stats();
    line("commitlog_segment_size", log_->options().segment_size);
    line("commitlog_flushes", st.flushes);
    line("commitlog_seals", st.seals);
    line("commitlog_flushed_mutations", st.flushed_mutations);
    line("commitlog_avg_flush_us",
         fmt::format("{:.1f}", st.flushes ? static_cast<double>(st.flush_nanos) / 1e3 /
                                                static_cast<double>(st.flushes)
                                          : 0.0));
    line("commitlog_spin_wait_us",
         std::chrono::duration_cast<std::chrono::microseconds>(log_->options().spin_wait).count());
    for (const MetricField& f : metric_fields()) {
      line(fmt::format("commitlog_{}", f.name), m.*f.value);
    }
    line("commitlog_durable_position", st.durable.to_string());
    out += "\r\n";
  }
  if (wanted("keyspace")) {
    out += "# Keyspace\r\n";
    // Counted while RocksDB's estimate is small; past it the estimate, so
    // that INFO stays cheap on a large store.
    uint64_t keys = engine_->property("rocksdb.estimate-num-keys");
    DurableFence unused;
    if (keys <= kCountKeysUpTo) {
      if (auto counted = store_.size(unused); counted.ok()) keys = *counted;
    }
    if (keys > 0) line("db0", fmt::format("keys={},expires=0,avg_ttl=0", keys));
    out += "\r\n";
  }
  return out;
}

std::string Server::info_persistence() {
  std::string out = "# Persistence\r\n";
  auto line = [&](std::string_view key, const auto& value) {
    out += fmt::format("{}:{}\r\n", key, value);
  };
  const bool failed = store_.failed() || counters_.durability_failures.load() > 0;
  std::lock_guard lock(flush_mu_);
  line("loading", 0);
  line("async_loading", 0);
  line("rdb_changes_since_last_save", 0);
  line("rdb_bgsave_in_progress", 0);
  line("rdb_last_save_time", static_cast<int64_t>(std::time(nullptr)));
  line("rdb_last_bgsave_status", "ok");
  line("aof_enabled", 1);
  line("aof_rewrite_in_progress", 0);
  line("aof_last_bgrewrite_status", "ok");
  line("aof_last_write_status", failed ? "err" : "ok");
  line("kv_engine", "rocksdb");
  line("kv_engine_dir", engine_dir_);
  line("kv_durability", log_ ? "commitlog" : "rocksdb-wal-sync");
  if (!log_) line("kv_rocksdb_wal_syncs", engine_->wal_syncs());
  line("kv_rocksdb_memtable_limit", engine_->memtable_bytes());
  line("kv_rocksdb_flushes", engine_->flushes());
  line("kv_flush_requests", flush_requests_);
  line("kv_flushed_checkpoint", flushed_ ? flushed_->to_string() : "none");
  line("kv_log_discards", discards_);
  line("kv_log_discarded_to", discarded_ ? discarded_->to_string() : "none");
  line("kv_last_error", last_error_.empty() ? "none" : last_error_);
  line("kv_startup_checkpoint", startup_.checkpoint ? startup_.checkpoint->to_string() : "none");
  line("kv_startup_replayed_mutations", startup_.replayed);
  line("kv_startup_skipped_mutations", startup_.skipped);
  line("kv_startup_replay_ms", fmt::format("{:.1f}", startup_.replay_ms));
  line("kv_startup_torn_tail_bytes", startup_.torn_tail_bytes);
  out += "\r\n";
  return out;
}

}  // namespace commitlog::kv
