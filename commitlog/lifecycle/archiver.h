// SPDX-License-Identifier: Apache-2.0
// Archiving and point-in-time restore, configured as Cassandra configures them
// in commitlog_archiving.properties:
//
//   archive_command=/bin/ln %path /backup/%name
//   restore_command=/bin/cp -f %from %to
//   restore_directories=/backup,/more/backup
//   restore_point_in_time=2024:10:11 12:00:00     (GMT; .SSS or .SSSSSS may follow)
//
// The file is in Java properties syntax: `key=value` or `key: value`, lines
// starting with # or ! are comments, a trailing backslash continues a line.
// An empty value means unset. precision and snapshot_commitlog_position are
// accepted and ignored (a warning); any other key is a warning.
//
// Commands are split on spaces and run with posix_spawnp, without a shell: no
// quoting, globbing or redirection. %path (the segment file) and %name (its
// file name) are replaced inside each word of archive_command, %from and %to
// inside restore_command's. A command succeeds when it exits with status 0.
//
// The log runs archive_command for each finished segment on its lifecycle
// thread (retention/segment_lifecycle.h) and for every segment already in its
// directory at open; a segment is deleted only once archived. A failed
// command keeps the segment, is counted (metrics) and printed on stderr.
// Because a crash between archiving and deleting a segment archives it again
// at the next open, the command must accept an existing target (cp does, ln
// does not).
//
// Thread-safety: every function may be called from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "commitlog/options.h"
#include "commitlog/replayer.h"
#include "commitlog/status.h"

namespace commitlog {

struct ArchivingProperties {
  std::string archive_command;  // empty: no archiving
  std::string restore_command;  // empty: no restore
  std::vector<std::string> restore_directories;
  std::optional<uint64_t> restore_point_in_time_us;  // µs since the epoch
  std::vector<std::string> warnings;                 // "<file>:<line>: ..."
};

// Errors are kInvalidArgument naming the file, the line and the key.
[[nodiscard]] Result<ArchivingProperties> parse_archiving_properties(std::string_view text,
                                                                     const std::string& name_for_errors);
// Reads the file at `path` through `fs`.
[[nodiscard]] Result<ArchivingProperties> load_archiving_properties(const std::string& path,
                                                                    FileSystem& fs = *posix_file_system());

// "yyyy:MM:dd HH:mm:ss[.SSS|.SSSSSS]" in GMT -> µs since the epoch.
[[nodiscard]] Result<uint64_t> parse_restore_point(std::string_view text);

// Splits `command` on spaces, replaces each `%key` of `substitutions` inside
// every word, runs it without a shell and waits. kIoError when it cannot be
// started, is killed, or exits with a non-zero status.
[[nodiscard]] Status run_command(const std::string& command,
                                 const std::vector<std::pair<std::string, std::string>>& substitutions);

// The ArchiveHook that runs `archive_command`, or an empty one for an empty command.
ArchiveHook archive_command_hook(const std::string& archive_command);

// Copies, with restore_command, every segment file of restore_directories
// that is neither in `staging_dir` nor in `live_dir` into `staging_dir`
// (created if missing). Returns the number restored. A missing restore
// directory or a failed command is an error; what was restored stays.
[[nodiscard]] Result<uint64_t> restore_segments(const ArchivingProperties& properties,
                                                const std::string& staging_dir,
                                                const std::string& live_dir);

// Restores (restore_segments), then replays the segments of `staging_dir` and
// of `live_dir` as one log in id order -- restored segments are older, so they
// come first; a segment in both is replayed once, from `live_dir`. Without a
// cutoff_time_us in `options`, restore_point_in_time is the cutoff. Failures
// to restore are the report's status.
ReplayReport restore_and_replay(const ArchivingProperties& properties, const std::string& staging_dir,
                                const std::string& live_dir, ReplayOptions options,
                                const ReplayHandler& handler);

}  // namespace commitlog
