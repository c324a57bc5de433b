// SPDX-License-Identifier: Apache-2.0
// A key-value store's life with its commit log: recover, open, append,
// discard what a memtable flush persisted, read the metrics, close.
// Build: c++ -std=c++20 embed.cc $(pkg-config --cflags --libs commitlog)
// Run:   ./a.out /tmp/embed-log    (twice: the second run recovers the first)
#include <commitlog/commit_log.h>
#include <commitlog/replayer.h>

#include <cstdio>
#include <map>
#include <string>

int main(int argc, char** argv) {
  if (argc != 2) return std::fprintf(stderr, "usage: %s DIR\n", argv[0]), 2;
  const std::string dir = argv[1];
  constexpr uint32_t kTable = 1;
  std::map<std::string, std::string> memtable;  // the store's in-memory table

  // 1. Recover before opening: every intact mutation, in log order. A
  //    directory that does not exist yet is an empty log.
  commitlog::ReplayReport replay =
      commitlog::replay_directory(dir, {}, [&](const commitlog::ReplayedMutation& m) {
        const std::string record(reinterpret_cast<const char*>(m.payload.data()), m.payload.size());
        const size_t eq = record.find('=');
        memtable[record.substr(0, eq)] = record.substr(eq + 1);
        return commitlog::Status{};
      });
  if (!replay.status.ok()) {  // names the file, the offset and what is wrong
    std::fprintf(stderr, "replay: %s\n", replay.status.to_string().c_str());
    return 1;
  }
  std::printf("recovered %llu mutations, %zu keys\n",
              static_cast<unsigned long long>(replay.mutations), memtable.size());

  // 2. Open. Under adaptive (like batch and group) an append returns once it
  //    is durable; under periodic it returns at once and wait_durable() waits.
  commitlog::Options options;
  options.directory = dir;
  options.sync_policy = "adaptive";
  auto opened = commitlog::CommitLog::open(options);
  if (!opened.ok()) {
    std::fprintf(stderr, "open: %s\n", opened.status().to_string().c_str());
    return 1;
  }
  commitlog::CommitLog& log = **opened;

  // 3. Log each write, then apply it: a write is acknowledged once durable.
  commitlog::Position flushed_up_to;
  for (int i = 0; i < 100; ++i) {
    const std::string key = "key" + std::to_string(i), value = "value" + std::to_string(i);
    auto position = log.append(kTable, key + "=" + value);
    if (!position.ok()) {  // e.g. a failed fsync: nothing after it is acknowledged
      std::fprintf(stderr, "append: %s\n", position.status().to_string().c_str());
      return 1;
    }
    if (auto durable = log.wait_durable(*position); !durable.ok()) return 1;
    memtable[key] = value;
    if (i == 49) flushed_up_to = *position;
  }

  // 4. Once a memtable flush has persisted the first 50 writes elsewhere (an
  //    SSTable), discard them: segments holding only discarded mutations are
  //    deleted. Without discard() the log grows for ever.
  if (auto discarded = log.discard(kTable, flushed_up_to); !discarded.ok()) return 1;

  // 5. Metrics (commitlog::to_prometheus(metrics) and to_json(metrics) render all).
  const commitlog::MetricsSnapshot metrics = log.metrics();
  std::printf("durable mutations %llu, segments %llu, log bytes %llu\n",
              static_cast<unsigned long long>(metrics.mutations_completed),
              static_cast<unsigned long long>(metrics.segments),
              static_cast<unsigned long long>(metrics.total_log_bytes));

  // 6. Close: flushes what is left and stops the log's threads.
  return log.close().ok() ? 0 : 1;
}
