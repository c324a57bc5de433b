// SPDX-License-Identifier: Apache-2.0
// INFO and CONFIG GET: the fields Redis clients and exporters read, and the
// store's own (kv_*, commitlog_*).
#include <unistd.h>

#include <algorithm>
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

// INFO is one "name:value" per line: a message's line breaks become spaces.
std::string one_line(std::string text) {
  std::replace_if(text.begin(), text.end(), [](char c) { return c == '\r' || c == '\n'; }, ' ');
  return text;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> Server::config() const {
  return {
      {"appendonly", "yes"},
      {"appendfsync", appendfsync(data_.log(), options_.reference_rocksdb_wal)},
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
      {"commitlog_sync", policy_name()},
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
    line("kv_rocksdb_memtable_bytes", data_.engine().property("rocksdb.cur-size-all-mem-tables"));
    line("kv_rocksdb_sst_bytes", data_.engine().property("rocksdb.total-sst-files-size"));
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
    line("total_writes", data_.store().writes());
    out += "\r\n";
  }
  if (wanted("commitlog") && data_.log() != nullptr) {
    const CommitLog& log = *data_.log();
    const MetricsSnapshot m = log.metrics();
    out += "# Commitlog\r\n";
    line("commitlog_sync", policy_name());
    line("commitlog_directory", data_.log_dir());
    // What an operator alerts on: every append fails once the log failed.
    line("commitlog_failed", m.failed ? 1 : 0);
    line("commitlog_failure", m.failed ? one_line(m.failure) : "none");
    line("commitlog_disk_access_mode", m.disk_access_mode);
    line("commitlog_disk_access_mode_setting", m.disk_access_mode_setting);
    auto files = list_segment_files(*options_.log.file_system, data_.log_dir());
    line("commitlog_segment_files", files.ok() ? files->size() : 0);
    // The sync thread's own counts (CommitLogStats), then the metrics table.
    const CommitLogStats st = log.stats();
    line("commitlog_segment_size", log.options().segment_size);
    line("commitlog_flushes", st.flushes);
    line("commitlog_seals", st.seals);
    line("commitlog_flushed_mutations", st.flushed_mutations);
    line("commitlog_mutations_per_flush",
         fmt::format("{:.1f}", st.flushes ? static_cast<double>(st.flushed_mutations) /
                                                static_cast<double>(st.flushes)
                                          : 0.0));
    line("commitlog_avg_flush_us",
         fmt::format("{:.1f}", st.flushes ? static_cast<double>(st.flush_nanos) / 1e3 /
                                                static_cast<double>(st.flushes)
                                          : 0.0));
    line("commitlog_spin_wait_us",
         std::chrono::duration_cast<std::chrono::microseconds>(log.options().spin_wait).count());
    for (const MetricField& f : metric_fields()) {
      line(fmt::format("commitlog_{}", f.name), m.*f.value);
    }
    line("commitlog_durable_position", st.durable.to_string());
    out += "\r\n";
  }
  if (wanted("keyspace")) {
    out += "# Keyspace\r\n";
    // Counted while RocksDB's estimate is small; past it the estimate, and
    // no expires, so that INFO stays cheap on a large store.
    KvStore::KeyCount count{.keys = data_.engine().property("rocksdb.estimate-num-keys")};
    DurableFence unused;
    if (count.keys <= kCountKeysUpTo) {
      if (auto counted = data_.store().count_keys(unused); counted.ok()) count = *counted;
    }
    if (count.keys > 0) line("db0", fmt::format("keys={},expires={},avg_ttl=0", count.keys, count.expiring));
    out += "\r\n";
  }
  return out;
}

std::string Server::info_persistence() {
  std::string out = "# Persistence\r\n";
  auto line = [&](std::string_view key, const auto& value) {
    out += fmt::format("{}:{}\r\n", key, value);
  };
  const bool failed = data_.store().failed() || counters_.durability_failures.load() > 0;
  const LogDiscarder::Report discards = data_.discards();
  const StartupReport& startup = data_.startup();
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
  line("kv_engine_dir", data_.engine_dir());
  line("kv_durability", data_.log() ? "commitlog" : "rocksdb-wal-sync");
  if (!data_.log()) line("kv_rocksdb_wal_syncs", data_.engine().wal_syncs());
  line("kv_rocksdb_memtable_limit", data_.engine().memtable_bytes());
  line("kv_rocksdb_flushes", data_.engine().flushes());
  line("kv_flush_requests", discards.flush_requests);
  line("kv_flushed_checkpoint", discards.flushed ? discards.flushed->to_string() : "none");
  line("kv_log_discards", discards.discards);
  line("kv_log_discarded_to", discards.discarded ? discards.discarded->to_string() : "none");
  line("kv_last_error", discards.last_error.empty() ? "none" : discards.last_error);
  line("kv_startup_checkpoint", startup.checkpoint ? startup.checkpoint->to_string() : "none");
  line("kv_startup_replayed_mutations", startup.replayed);
  line("kv_startup_skipped_mutations", startup.skipped);
  line("kv_startup_replay_ms", fmt::format("{:.1f}", startup.replay_ms));
  line("kv_startup_torn_tail_bytes", startup.torn_tail_bytes);
  out += "\r\n";
  return out;
}

}  // namespace commitlog::kv
