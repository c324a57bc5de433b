// SPDX-License-Identifier: Apache-2.0
// commitlog-kv's settings, from its command line (tools/kv/main.cc).
#pragma once

#include <cstdint>
#include <string>

#include "commitlog/commit_log.h"
#include "commitlog/replayer.h"
#include "tools/kv/client_limits.h"

namespace commitlog::kv {

struct ServerOptions {
  Options log;  // its directory is replaced by <dir>/commitlog
  std::string policy_origin;  // why log.sync_policy: "--policy", "FILE:LINE", a default
  std::string dir = "data";  // RocksDB in <dir>/rocksdb, the log in <dir>/commitlog
  std::string bind = "127.0.0.1";
  int port = 6380;  // 0: any free port (the ready line names it)
  int threads = 1;  // workers; one leaves the second core to the log and the clients
  uint64_t memtable_bytes = 64 << 20;  // RocksDB's write_buffer_size (memtable_bytes_used())
  bool memtable_bytes_given = false;   // by --memtable-size: a value lowered is said
  // The reference setting: no commit log, RocksDB's own WAL synced once per
  // worker round (DB::SyncWAL), for comparisons.
  bool reference_rocksdb_wal = false;
  RecoveryMode recovery = RecoveryMode::kTolerateTornTail;
  std::string password;  // empty: none required
  bool protected_mode = true;
  ClientLimits clients;
  // The largest request a client may send (client-query-buffer-limit); 0:
  // the largest the log takes, max_mutation_size plus 1MiB for the rest.
  uint64_t query_buffer_limit = 0;
};

}  // namespace commitlog::kv
