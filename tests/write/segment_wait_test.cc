// SPDX-License-Identifier: Apache-2.0
// A producer that switches segments waits for the allocator, which waits
// for a pooled buffer (compressed, standard and direct segments), which comes
// back only when the sync thread finishes a segment. Once syncs fail, none
// finishes: the wait must then end with the sticky error, and close() must
// complete, rather than both waiting for a buffer forever.
//
// The pool holds one buffer, which the active segment takes, so the first
// switch always waits; the sync that would finish the full segment is held
// in the fault file system, then failed.
#include <doctest/doctest.h>

#include <cerrno>
#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <thread>

#include "commitlog/commit_log.h"
#include "tests/support/fault_file_system.h"

namespace commitlog {
namespace {

using testing::FaultFileSystem;
using testing::Op;

// A hang in the code under test fails the test instead of the suite: the
// threads below own what they use, so one that never returns is left behind.
constexpr std::chrono::seconds kLimit(60);

struct Scene {
  FaultFileSystem fs;
  std::unique_ptr<CommitLog> log;
};

std::shared_ptr<Scene> open_scene(DiskAccessMode mode, Compression compression, CommitFailurePolicy failure) {
  auto scene = std::make_shared<Scene>();
  Options o;
  o.directory = "/wait/commitlog";
  o.file_system = &scene->fs;
  o.sync_policy = "periodic";  // appends never wait for a sync: they reach the switch
  o.segment_size = 64 << 10;
  o.disk_access_mode = mode;
  o.compression = compression;
  o.max_compression_buffers_in_pool = 1;
  o.commit_failure_policy = failure;
  auto log = CommitLog::open(o);
  REQUIRE_MESSAGE(log.ok(), log.status().to_string());
  scene->log = std::move(log).value();
  return scene;
}

// Appends on its own thread until an append fails; the future holds that error.
std::future<Status> append_until_failure(const std::shared_ptr<Scene>& scene) {
  auto result = std::make_shared<std::promise<Status>>();
  std::future<Status> future = result->get_future();
  std::thread([owned = scene, result]() mutable {
    const std::string payload(1000, 'p');
    Status s;
    for (int i = 0; i < 100000 && s.ok(); ++i) s = owned->log->append(1, payload).status();
    owned.reset();  // the test, once it has the result, is the last owner
    result->set_value(s);
  }).detach();
  return future;
}

std::future<Status> close_async(const std::shared_ptr<Scene>& scene) {
  auto result = std::make_shared<std::promise<Status>>();
  std::future<Status> future = result->get_future();
  std::thread([owned = scene, result]() mutable {
    const Status s = owned->log->close();
    owned.reset();
    result->set_value(s);
  }).detach();
  return future;
}

// Starts the producer with every sync held (the storages write with pwrite,
// then fdatasync), so no segment finishes, and waits until the producer
// waits for the next segment.
std::future<Status> produce_until_switch_waits(const std::shared_ptr<Scene>& scene) {
  scene->fs.hold(Op::kSync);
  std::future<Status> appended = append_until_failure(scene);
  REQUIRE(scene->fs.await_held(Op::kSync, 1, kLimit));
  const auto until = std::chrono::steady_clock::now() + kLimit;
  while (scene->log->stats().allocation_waits == 0) {
    REQUIRE(std::chrono::steady_clock::now() < until);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return appended;
}

struct Shape {
  DiskAccessMode mode;
  Compression compression;
};
constexpr Shape kPooledShapes[] = {
    {DiskAccessMode::kLegacy, Compression::kLz4},
    {DiskAccessMode::kStandard, Compression::kNone},
    {DiskAccessMode::kDirect, Compression::kNone},
    {DiskAccessMode::kDirect, Compression::kLz4},
};

TEST_CASE("segment wait: a producer waiting for a pooled segment gets the sticky sync error, and close completes") {
  for (const Shape& shape : kPooledShapes) {
    CAPTURE(static_cast<int>(shape.mode));
    CAPTURE(static_cast<int>(shape.compression));
    auto scene = open_scene(shape.mode, shape.compression, CommitFailurePolicy::kStop);
    std::future<Status> appended = produce_until_switch_waits(scene);
    scene->fs.inject(Op::kSync, EIO);
    scene->fs.release(Op::kSync);
    REQUIRE(appended.wait_for(kLimit) == std::future_status::ready);
    const Status failure = appended.get();
    CHECK(failure.code() == ErrorCode::kIoError);
    CHECK_MESSAGE(failure.message().find("fdatasync") != std::string::npos, failure.to_string());
    CHECK(scene->log->append(1, "after").status().code() == ErrorCode::kIoError);
    std::future<Status> closed = close_async(scene);
    REQUIRE(closed.wait_for(kLimit) == std::future_status::ready);
    CHECK(closed.get().code() == ErrorCode::kIoError);
  }
}

TEST_CASE("segment wait: close ends a wait for a pooled segment on a disk that keeps failing (policy ignore)") {
  // Under ignore the log goes on after a failed sync, so the producer waits
  // for the disk to come back; close() must end that wait.
  for (const Shape& shape : kPooledShapes) {
    CAPTURE(static_cast<int>(shape.mode));
    CAPTURE(static_cast<int>(shape.compression));
    auto scene = open_scene(shape.mode, shape.compression, CommitFailurePolicy::kIgnore);
    std::future<Status> appended = produce_until_switch_waits(scene);
    scene->fs.inject(Op::kSync, EIO);
    scene->fs.release(Op::kSync);
    std::future<Status> closed = close_async(scene);
    REQUIRE(closed.wait_for(kLimit) == std::future_status::ready);
    CHECK(closed.get().ok());
    REQUIRE(appended.wait_for(kLimit) == std::future_status::ready);
    CHECK(appended.get().code() == ErrorCode::kClosed);
  }
}

}  // namespace
}  // namespace commitlog
