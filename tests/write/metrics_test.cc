// SPDX-License-Identifier: Apache-2.0
// The metrics snapshot of a running log and its JSON and Prometheus renderings.
#include <doctest/doctest.h>

#include <cerrno>
#include <chrono>
#include <span>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "commitlog/commit_log.h"
#include "segment/format.h"
#include "segment/storage/mapped_segment.h"
#include "tests/support/fault_file_system.h"
#include "tests/support/temp_dir.h"

namespace commitlog {
namespace {

using testing::TempDir;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST_CASE("metrics: a snapshot counts what happened, JSON and Prometheus name every series") {
  TempDir dir;
  Options options;
  options.directory = dir.path();
  options.sync_policy = "batch";
  options.segment_size = 64 << 10;
  auto log = CommitLog::open(options);
  REQUIRE(log.ok());
  for (int i = 0; i < 100; ++i) REQUIRE((*log)->append(1, std::string(1000, 'x')).ok());  // a segment switch
  CHECK((*log)->append(1, std::string(40 << 10, 'x')).status().code() == ErrorCode::kInvalidArgument);
  REQUIRE((*log)->sync().ok());

  const MetricsSnapshot m = (*log)->metrics();
  CHECK(m.mutations_completed == 100);
  CHECK(m.oversized_mutations == 1);
  // batch: each producer waits for its sync, or runs it itself (led by a
  // plain thread that found the sync thread idle, which is no wait).
  CHECK(m.commit_waits + m.producer_flushes > 0);
  CHECK(m.segment_waits >= 1);
  CHECK(m.segments >= 2);
  CHECK(m.total_log_bytes >= 2 * options.segment_size);
  CHECK(m.sync_latency_us.count() == (*log)->stats().flushes);
  CHECK(m.mutations_per_sync.count() == (*log)->stats().flushes);
  CHECK(m.mutations_per_sync.sum == 100);
  CHECK(m.syncs_by_reason[static_cast<size_t>(SyncReason::kProducerRequest)] > 0);
  CHECK(m.syncs_by_reason[static_cast<size_t>(SyncReason::kSegmentSwitch)] > 0);

  const auto json = nlohmann::json::parse(to_json(m));
  for (const char* key :
       {"mutations_completed", "producers_waiting", "producers_waiting_for_space",
        "total_log_bytes", "segment_wait_nanos", "commit_wait_nanos", "seal_waits",
        "seal_wait_nanos", "spins", "spins_missed", "spin_nanos", "sync_latency_us",
        "mutations_per_sync", "syncs_by_reason", "oversized_mutations", "space_timeouts",
        "segments_deleted", "archive_failures", "flush_requests"}) {
    CAPTURE(key);
    CHECK(json.contains(key));
  }
  CHECK(json["mutations_completed"] == 100);
  CHECK(json["oversized_mutations"] == 1);
  CHECK(json["syncs_by_reason"]["segment_switch"] == m.syncs_by_reason[static_cast<size_t>(SyncReason::kSegmentSwitch)]);
  CHECK(json["mutations_per_sync"]["sum"] == 100);
  CHECK(json["sync_latency_us"]["buckets"].back()["le"] == "+Inf");

  const std::string text = to_prometheus(m);
  for (const char* line : {"# TYPE commitlog_mutations_completed_total counter\n",
                           "commitlog_mutations_completed_total 100\n",
                           "commitlog_producers_waiting{for=\"commit\"} 0\n",
                           "commitlog_producers_waiting{for=\"space\"} 0\n",
                           "# TYPE commitlog_total_log_bytes gauge\n",
                           "# TYPE commitlog_segment_wait_seconds_total counter\n",
                           "# TYPE commitlog_commit_wait_seconds_total counter\n",
                           "# TYPE commitlog_seal_waits_total counter\n",
                           "# TYPE commitlog_seal_wait_seconds_total counter\n",
                           "# TYPE commitlog_spins_total counter\n",
                           "# TYPE commitlog_spins_missed_total counter\n",
                           "# TYPE commitlog_spin_seconds_total counter\n",
                           "# TYPE commitlog_sync_latency_microseconds histogram\n",
                           "commitlog_sync_latency_microseconds_bucket{le=\"0\"} ",
                           "commitlog_sync_latency_microseconds_bucket{le=\"1023\"} ",
                           "# TYPE commitlog_mutations_per_sync histogram\n",
                           "commitlog_mutations_per_sync_sum 100\n",
                           "commitlog_syncs_total{reason=\"segment_switch\"} ",
                           "commitlog_oversized_mutations_total 1\n",
                           "commitlog_space_timeouts_total 0\n",
                           "commitlog_segments_deleted_total 0\n"}) {
    CAPTURE(line);
    CHECK(contains(text, line));
  }
  const std::string inf = "commitlog_mutations_per_sync_bucket{le=\"+Inf\"} " + std::to_string(m.mutations_per_sync.count()) + "\n";
  CHECK(contains(text, inf));
  REQUIRE((*log)->close().ok());
}

// A producer preempted between its reservation and its length store holds up
// the seal, and with it the whole flush: seal_waits counts such seals.
TEST_CASE("metrics: a seal that waits for an entry still being written counts and times the wait") {
  using namespace std::chrono_literals;
  TempDir dir;
  auto created = MappedSegment::create(*posix_file_system(), *real_clock(), dir.path(),
                                       SegmentFileInfo{1, 64 << 10, format::kFlagSyncedMarks, 0});
  REQUIRE_MESSAGE(created.ok(), created.status().to_string());
  MappedSegment& segment = **created;
  const std::string payload = "value";
  const auto bytes = std::as_bytes(std::span(payload));
  const uint64_t footprint = format::entry_footprint(payload.size());

  const auto written = segment.reserve(footprint);
  REQUIRE(written);
  REQUIRE(segment.write_entry(*written, 7, 1, bytes).ok());
  segment.seal();
  CHECK(segment.take_publish_waits().seals == 0);  // nothing was left to wait for

  const auto in_progress = segment.reserve(footprint);
  REQUIRE(in_progress);
  const uint64_t reserved = segment.used();
  std::thread sealer([&] { segment.seal(); });
  while (segment.used() == reserved) std::this_thread::yield();  // the seal placed its marker
  std::this_thread::sleep_for(20ms);
  REQUIRE(segment.write_entry(*in_progress, 7, 2, bytes).ok());
  sealer.join();
  const MappedSegment::PublishWaits waits = segment.take_publish_waits();
  CHECK(waits.seals == 1);
  CHECK(waits.nanos >= std::chrono::nanoseconds(10ms).count());
  CHECK(segment.take_publish_waits().seals == 0);  // taken
}

TEST_CASE("metrics: a failed log says so and why, in the snapshot, JSON and Prometheus") {
  testing::FaultFileSystem fs;
  Options o;
  o.directory = testing::kLogDir;
  o.file_system = &fs;
  o.sync_policy = "batch";
  o.segment_size = 64 << 10;
  o.disk_access_mode = DiskAccessMode::kMmap;
  auto log = CommitLog::open(o);
  REQUIRE(log.ok());
  REQUIRE((*log)->append(1, std::string("before")).ok());
  const MetricsSnapshot healthy = (*log)->metrics();
  CHECK_FALSE(healthy.failed);
  CHECK(healthy.failure.empty());
  CHECK(healthy.sync_failures == 0);
  CHECK(to_prometheus(healthy).find("\ncommitlog_failed 0\n") != std::string::npos);
  fs.inject(testing::Op::kSyncMapped, EIO);
  CHECK_FALSE((*log)->append(1, std::string("after")).ok());
  const MetricsSnapshot m = (*log)->metrics();
  CHECK(m.failed);
  CHECK(m.failure.find("msync") != std::string::npos);
  CHECK(m.sync_failures == 1);
  const auto j = nlohmann::json::parse(to_json(m));
  CHECK(j["failed"] == true);
  CHECK(j["failure"] == m.failure);
  CHECK(j["sync_failures"] == 1);
  const std::string p = to_prometheus(m);
  CHECK(p.find("\ncommitlog_failed{error=\"") != std::string::npos);
  CHECK(p.find("\ncommitlog_sync_failures_total 1\n") != std::string::npos);
  (*log)->close().ignore();
}

}  // namespace
}  // namespace commitlog
