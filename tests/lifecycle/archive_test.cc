// SPDX-License-Identifier: Apache-2.0
// Archiving and restore (commitlog_archiving.properties): the file format,
// commands run without a shell, a log that archives every finished segment
// before deleting it and keeps it when archiving fails, restore_and_replay,
// and power loss between archiving a segment and deleting it.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <fmt/core.h>

#include "commitlog/lifecycle/archiver.h"
#include "commitlog/commit_log.h"
#include "tests/support/fault_file_system.h"
#include "tests/support/log_files.h"
#include "tests/support/temp_dir.h"

namespace commitlog {
namespace {

using testing::CrashMode;
using testing::FaultFileSystem;
using testing::TempDir;
using testing::write_text;

constexpr uint64_t kArchiveSegmentSize = 64 << 10;

std::string archive_payload(int i) { return fmt::format("m{} {}", i, std::string(1000, 'a' + i % 26)); }

std::vector<std::string> names(const std::string& dir) {
  std::vector<std::string> out;
  for (const SegmentFile& f : testing::segment_files(dir)) out.push_back(f.path.substr(f.path.rfind('/') + 1));
  return out;
}

TEST_CASE("archiving properties: Cassandra's keys, comments, continuations, warnings") {
  auto p = parse_archiving_properties(
      "# comment\n"
      "! another comment\n"
      "archive_command=/bin/cp %path /backup/%name\n"
      "restore_command: /bin/cp -f %from %to\n"
      "restore_directories = /a, /b ,,/c\n"
      "restore_point_in_time=2024:10:11 12:00:00.250\n"
      "precision=MICROSECONDS\n"
      "snapshot_commitlog_position=\n"
      "what=ever\n"
      "archive_command_2=a \\\n"
      "   b\n",
      "t.properties");
  REQUIRE_MESSAGE(p.ok(), p.status().to_string());
  CHECK(p->archive_command == "/bin/cp %path /backup/%name");
  CHECK(p->restore_command == "/bin/cp -f %from %to");
  CHECK(p->restore_directories == std::vector<std::string>{"/a", "/b", "/c"});
  REQUIRE(p->restore_point_in_time_us.has_value());
  CHECK(*p->restore_point_in_time_us == 1728648000250000ull);  // 2024-10-11T12:00:00.250Z
  REQUIRE(p->warnings.size() == 3);
  CHECK(p->warnings[0].starts_with("t.properties:7: precision"));
  CHECK(p->warnings[1].starts_with("t.properties:9: what"));
  CHECK(p->warnings[2].starts_with("t.properties:10: archive_command_2"));

  auto bad = parse_archiving_properties("\nrestore_point_in_time=2024-10-11 12:00:00\n", "t.properties");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().code() == ErrorCode::kInvalidArgument);
  CHECK(bad.status().message().starts_with("t.properties:2: restore_point_in_time: "));
  CHECK(parse_restore_point("1970:01:01 00:00:01.000001").value() == 1000001);
  CHECK_FALSE(parse_restore_point("2024:02:30 00:00:00").ok());
  CHECK_FALSE(parse_restore_point("2024:10:11 12:00:00.25").ok());
}

TEST_CASE("archiving: commands run without a shell, with %-substitutions in each word") {
  TempDir dir;
  REQUIRE(run_command("/bin/mkdir " + dir.file("out"), {}).ok());
  write_text(dir.file("seg"), "segment bytes");
  // cp is found on PATH; %path and %name are replaced inside words.
  REQUIRE(run_command("cp %path " + dir.path() + "/out/%name", {{"path", dir.file("seg")}, {"name", "n.log"}}).ok());
  std::ifstream copied(dir.path() + "/out/n.log");
  std::string text;
  std::getline(copied, text);
  CHECK(text == "segment bytes");
  CHECK(run_command("/bin/cp %path " + dir.path() + "/out/%name", {{"path", dir.file("missing")}, {"name", "x"}})
            .code() == ErrorCode::kIoError);
  // No shell: ";" and ">" are plain characters of the arguments.
  REQUIRE(run_command("/bin/true %path;touch >" + dir.file("never"), {{"path", "x"}}).ok());
  CHECK_FALSE(std::ifstream(dir.file("never")).good());

  Status failed = run_command("/bin/false", {});
  CHECK(failed.code() == ErrorCode::kIoError);
  CHECK(failed.message().find("exited with status 1") != std::string::npos);
  CHECK_FALSE(run_command("/nonexistent/program %path", {{"path", "x"}}).ok());
  CHECK(run_command("", {}).code() == ErrorCode::kInvalidArgument);
}

struct ArchivedLog {
  TempDir base;
  std::string live = base.file("log"), archive = base.file("archive"), staging = base.file("staging");
  std::string properties = base.file("commitlog_archiving.properties");
  std::vector<std::string> written;

  // Writes ~5 segments of table 1, discards them all, closes; returns the metrics.
  MetricsSnapshot run(const std::string& archive_command) {
    REQUIRE(run_command("/bin/mkdir -p " + archive, {}).ok());
    write_text(properties, "archive_command=" + archive_command +
                               "\nrestore_command=/bin/cp %from %to\nrestore_directories=" + archive + "\n");
    Options options;
    options.directory = live;
    options.segment_size = kArchiveSegmentSize;
    options.archiving_properties = properties;
    auto log = CommitLog::open(options);
    REQUIRE_MESSAGE(log.ok(), log.status().to_string());
    Position last;
    for (int i = 0; i < 300; ++i) {
      written.push_back(archive_payload(i));
      last = (*log)->append(1, written.back()).value();
    }
    REQUIRE((*log)->sync().ok());
    REQUIRE((*log)->discard(1, last).ok());
    REQUIRE((*log)->close().ok());
    return (*log)->metrics();
  }
};

TEST_CASE("archiving: every finished segment is archived, then deleted, restore replays archive and live log") {
  ArchivedLog t;
  const MetricsSnapshot m = t.run("/bin/cp %path " + t.archive + "/%name");
  const std::vector<std::string> live = names(t.live), archived = names(t.archive);
  REQUIRE(live.size() == 1);  // the newest segment is never deleted
  REQUIRE(archived.size() >= 5);
  CHECK(archived.back() == live.back());  // archived too, at close
  CHECK(m.segments_archived == archived.size());
  CHECK(m.segments_deleted == archived.size() - 1);
  CHECK(m.archive_failures == 0);

  auto properties = load_archiving_properties(t.properties);
  REQUIRE(properties.ok());
  std::vector<std::string> replayed;
  ReplayReport report = restore_and_replay(*properties, t.staging, t.live, ReplayOptions{},
                                           [&](const ReplayedMutation& m) {
                                             replayed.emplace_back(reinterpret_cast<const char*>(m.payload.data()),
                                                                   m.payload.size());
                                             return Status{};
                                           });
  REQUIRE_MESSAGE(report.status.ok(), report.status.to_string());
  CHECK(replayed == t.written);
  CHECK(names(t.staging).size() == archived.size() - 1);  // the live segment was not restored

  ArchivingProperties missing = *properties;
  missing.restore_directories = {t.base.file("nope")};
  CHECK(restore_and_replay(missing, t.staging, t.live, {}, [](const ReplayedMutation&) { return Status{}; })
            .status.code() == ErrorCode::kNotFound);
}

TEST_CASE("archiving: a failing archive command keeps every segment and is counted") {
  ArchivedLog t;
  const MetricsSnapshot m = t.run("/bin/false %path");
  CHECK(names(t.live).size() >= 5);
  CHECK(m.segments_deleted == 0);
  CHECK(m.archive_failures == names(t.live).size());
  CHECK(testing::replay_all(t.live).payloads == t.written);
}

// Forwards to a FaultFileSystem and pulls its plug right after the
// `crash_after_removes`-th successful remove: deleted, not yet made durable.
class CrashAfterRemoves final : public FileSystem {
 public:
  CrashAfterRemoves(FaultFileSystem& fs, int crash_after_removes) : fs_(fs), left_(crash_after_removes) {}
  Result<std::unique_ptr<File>> open(const std::string& path, OpenMode mode, uint32_t permissions) override {
    return fs_.open(path, mode, permissions);
  }
  Status rename(const std::string& from, const std::string& to) override { return fs_.rename(from, to); }
  Status remove(const std::string& path) override {
    Status status = fs_.remove(path);
    if (status.ok() && --left_ == 0) fs_.pull_plug();
    return status;
  }
  Result<std::vector<std::string>> list(const std::string& dir) override { return fs_.list(dir); }
  Status create_dirs(const std::string& dir, uint32_t permissions) override {
    return fs_.create_dirs(dir, permissions);
  }
  Status sync_dir(const std::string& dir) override { return fs_.sync_dir(dir); }
  bool exists(const std::string& path) override { return fs_.exists(path); }
  bool is_directory(const std::string& path) override { return fs_.is_directory(path); }

 private:
  FaultFileSystem& fs_;
  std::atomic<int> left_;
};

constexpr char kLive[] = "/db/commitlog";
constexpr char kArchive[] = "/db/archive";

// Copies a segment into kArchive durably, replacing an earlier copy.
Status archive_within(FileSystem& fs, const std::string& path, const std::string& name) {
  auto bytes = read_whole_file(fs, path);
  if (!bytes.ok()) return bytes.status();
  const std::string to = std::string(kArchive) + "/" + name;
  if (fs.exists(to)) CL_RETURN_IF_ERROR(fs.remove(to));
  auto file = fs.open(to, OpenMode::kCreateNew);
  if (!file.ok()) return file.status();
  CL_RETURN_IF_ERROR((*file)->write_at(0, *bytes));
  CL_RETURN_IF_ERROR((*file)->sync());
  return fs.sync_dir(kArchive);
}

// Every mutation in the archive and the live log, replayed as one log (a
// segment in both once).
std::vector<std::string> recovered(FileSystem& fs) {
  std::map<uint64_t, SegmentFile> files;
  for (const char* dir : {kArchive, kLive}) {
    auto listed = list_segment_files(fs, dir);
    REQUIRE(listed.ok());
    for (const SegmentFile& f : *listed) files[f.id] = f;
  }
  std::vector<SegmentFile> ordered;
  for (const auto& [id, f] : files) ordered.push_back(f);
  ReplayOptions options;
  options.file_system = &fs;
  std::vector<std::string> out;
  ReplayReport report = replay_segment_files(ordered, options, [&](const ReplayedMutation& m) {
    out.emplace_back(reinterpret_cast<const char*>(m.payload.data()), m.payload.size());
    return Status{};
  });
  REQUIRE_MESSAGE(report.status.ok(), report.status.to_string());
  return out;
}

TEST_CASE("archiving: power loss between archiving a segment and deleting it loses nothing") {
  struct CrashPoint {
    const char* name;
    int after_archives;  // pull the plug once this many segments are archived (0: never)
    int after_removes;   // ... or right after this many removes, before the directory sync
  };
  for (const CrashPoint& point : {CrashPoint{"after 1 archive", 1, 0}, CrashPoint{"after 3 archives", 3, 0},
                                  CrashPoint{"after 1 remove", 0, 1}, CrashPoint{"after 3 removes", 0, 3}}) {
    CAPTURE(point.name);
    FaultFileSystem fs;
    REQUIRE(fs.create_dirs(kArchive).ok());
    CrashAfterRemoves crashing(fs, point.after_removes);
    std::atomic<int> archives{0};
    std::atomic<bool> discarded{false};  // archiving waits for it, so no crash hits the writes
    Options options;
    options.directory = kLive;
    options.segment_size = kArchiveSegmentSize;
    options.file_system = &crashing;
    options.archive_segment = [&](const std::string& path, const std::string& name) {
      while (!discarded.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      Status status = archive_within(fs, path, name);
      if (status.ok() && ++archives == point.after_archives) fs.pull_plug();
      return status;
    };
    std::vector<std::string> written;
    {
      auto log = CommitLog::open(options);
      REQUIRE(log.ok());
      Position last;
      for (int i = 0; i < 300; ++i) {
        written.push_back(archive_payload(i));
        last = (*log)->append(1, written.back()).value();
      }
      REQUIRE((*log)->sync().ok());  // every mutation is durable
      REQUIRE((*log)->discard(1, last).ok());
      discarded = true;
      (*log)->close().ignore();      // fails once the plug is pulled
      CHECK(fs.plug_pulled());
    }
    for (CrashMode mode : {CrashMode::kDrop, CrashMode::kRandom}) {
      CAPTURE(testing::crash_mode_name(mode));
      std::unique_ptr<FaultFileSystem> after = fs.crash(mode, 7);
      CHECK(recovered(*after) == written);

      // The next process archives the old segments again and deletes them
      // once discarded; still nothing is lost.
      Options reopened = options;
      reopened.file_system = after.get();
      reopened.archive_segment = [&](const std::string& path, const std::string& name) {
        return archive_within(*after, path, name);
      };
      auto log = CommitLog::open(reopened);
      REQUIRE(log.ok());
      const Position p = (*log)->append(2, "after the crash").value();
      REQUIRE((*log)->discard(1, p).ok());
      REQUIRE((*log)->close().ok());
      auto live = list_segment_files(*after, kLive);
      REQUIRE(live.ok());
      CHECK(live->size() == 1);
      std::vector<std::string> expected = written;
      expected.push_back("after the crash");
      CHECK(recovered(*after) == expected);
    }
  }
}

}  // namespace
}  // namespace commitlog
