// SPDX-License-Identifier: Apache-2.0
// `commitlog replay DIR [--mode MODE] [--table ID]... [--from SEGMENT:OFFSET]
//                  [--until TIME] [--out FILE]`:
// replays a log through the library's replayer and writes each mutation, in
// log order, as one JSON line (tools/cli/mutation_line.h) to stdout or FILE.
// Problems (one line each) and a summary go to stderr. Exit codes as for
// verify: 0 intact (torn tails allowed), 1 damage that lost data or that the
// mode refused (tolerate-torn-tail and absolute stop there, point-in-time
// too; skip writes the rest), 2 a usage or input error. The default mode is
// tolerate-torn-tail, the library's.
#include <algorithm>
#include <charconv>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "commitlog/replayer.h"
#include "tools/common/commands.h"
#include "tools/lab/log_fixture.h"
#include "tools/cli/live_writer.h"
#include "tools/cli/log_input.h"
#include "tools/cli/mutation_line.h"
#include "tools/common/output.h"
#include "tools/cli/report_format.h"
#include "tools/common/key_file_option.h"

namespace commitlog::tools {
namespace {

struct ReplayArgs {
  std::string dir;
  RecoveryMode mode = RecoveryMode::kTolerateTornTail;
  std::vector<uint32_t> tables;
  std::string from;
  std::string until;
  std::string out;
  std::string key_file;
};

// The options the flags ask for, or a usage error printed on stderr.
std::optional<ReplayOptions> replay_options(const ReplayArgs& args) {
  ReplayOptions options;
  options.mode = args.mode;
  auto keys = load_key_file_option(args.key_file);
  if (!keys.ok()) {
    fmt::print(stderr, "commitlog replay: {}\n", keys.status().message());
    return std::nullopt;
  }
  options.keys = *keys;
  if (!args.from.empty()) {
    options.from = parse_position(args.from);
    if (!options.from) {
      fmt::print(stderr, "commitlog replay: --from: expected SEGMENT:OFFSET (two numbers), got '{}'\n",
                 args.from);
      return std::nullopt;
    }
  }
  if (!args.until.empty()) {
    auto until = parse_time_us(args.until);
    if (!until.ok()) {
      fmt::print(stderr, "commitlog replay: --until: {}\n", until.status().message());
      return std::nullopt;
    }
    options.cutoff_time_us = *until;
  }
  return options;
}

int run_replay(const ReplayArgs& args) {
  const std::optional<ReplayOptions> options = replay_options(args);
  if (!options) return kExitUsage;
  auto files = open_log_directory(args.dir);
  if (!files.ok()) return input_error("replay", files.status());
  auto out = Output::open(args.out);
  if (!out.ok()) return input_error("replay", out.status());
  note_live_writer("replay", args.dir);
  Output& output = **out;

  std::vector<uint32_t> tables = args.tables;
  std::sort(tables.begin(), tables.end());
  uint64_t written = 0, written_bytes = 0;
  ReplayProgress progress("replay", *files);
  const auto start = std::chrono::steady_clock::now();
  ReplayReport report = replay_directory(args.dir, *options, [&](const ReplayedMutation& m) {
    progress.update(m.position);
    if (!tables.empty() && !std::binary_search(tables.begin(), tables.end(), m.table)) return Status{};
    append_mutation_line(output, m);
    ++written;
    written_bytes += m.payload.size();
    return output.failed() ? output.flush() : Status{};
  });
  Status flushed = output.flush();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  progress.finish();

  if (report.status.ok() && !flushed.ok()) report.status = flushed;
  const int code = exit_code_for(report);
  if (code == kExitUsage) return input_error("replay", report.status);
  for (const ReplayProblem& p : report.problems) fmt::print(stderr, "{}\n", problem_line(p));
  const std::string stopped =
      report.stopped_at ? fmt::format("; stopped at {} ({}), {} later segments not read",
                                      report.stopped_at->to_string(), recovery_mode_name(args.mode),
                                      report.unread_segments)
                        : "";
  fmt::print(stderr,
             "replay {}: {} mutations ({} payload bytes) written of {} replayed; {} segments, {} bytes "
             "read; {} bytes skipped; torn tail {} bytes; {:.3f} s, {:.1f} MB/s{}\n",
             args.dir, written, written_bytes, report.mutations, report.segments, report.bytes_read,
             report.skipped_bytes, report.torn_tail_bytes, seconds,
             seconds > 0 ? static_cast<double>(report.bytes_read) / 1e6 / seconds : 0.0, stopped);
  return code;
}

}  // namespace

void add_replay_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<ReplayArgs>();
  CLI::App* cmd = app.add_subcommand("replay", "write every replayed mutation as a line of JSON");
  cmd->add_option("DIR", args->dir, "log directory")->required();
  add_mode_option(cmd, args->mode, RecoveryMode::kTolerateTornTail);
  cmd->add_option("--table", args->tables, "replay only this table (repeatable)");
  cmd->add_option("--from", args->from, "skip everything before this position, SEGMENT:OFFSET");
  cmd->add_option("--until", args->until,
                  "skip mutations written after this time: 2024-05-01T12:00:00Z, Cassandra's "
                  "2024:05:01 12:00:00 (UTC), or microseconds since the epoch");
  cmd->add_option("--out", args->out, "write the mutations to FILE instead of stdout");
  add_key_file_option(cmd, &args->key_file);
  cmd->callback([args, &exit_code] { exit_code = run_replay(*args); });
  add_replay_fixture_command(app, exit_code);
}

}  // namespace commitlog::tools
