// SPDX-License-Identifier: Apache-2.0
// `commitlog verify DIR [--mode MODE] [--format text|json]`: replays the log
// without applying anything and reports every problem with its file, offset,
// kind and the exact bytes it covers. Exit 0 when the log is intact or its
// only damage is a torn tail where a process stopped (reported, normal after
// a crash), 1 when damage lost data or the mode refused it (absolute refuses
// torn tails), 2 on a usage or input error (one line on stderr, nothing on
// stdout). The default mode is skip, so one run finds every problem.
//   text: a line per problem (problem_line()), then a summary line.
//   json: one object: {"directory", "mode", "verdict", "segments", ...,
//         "problems": [{"file", "offset", "kind", "bytes", "corruption"}]}.
#include <memory>
#include <string>

#include <fmt/core.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "commitlog/replayer.h"
#include "tools/common/commands.h"
#include "tools/cli/live_writer.h"
#include "tools/cli/log_input.h"
#include "tools/cli/report_format.h"
#include "tools/common/key_file_option.h"

namespace commitlog::tools {
namespace {

struct VerifyArgs {
  std::string dir;
  RecoveryMode mode = RecoveryMode::kSkip;
  std::string format = "text";
  std::string key_file;
};

// What was found, whatever the mode made of it: "intact", "unproved tail"
// (intact as far as the bytes tell, but a run's end has no seal), "torn
// tail" (intact but for torn tails) or "corrupt".
const char* verdict(const ReplayReport& report) {
  if (report.corruptions > 0) return "corrupt";
  for (const ReplayProblem& p : report.problems) {
    if (p.bytes > 0 || p.stored_bytes > 0) return "torn tail";
  }
  return report.unproved_tails.empty() ? "intact" : "unproved tail";
}

void print_text(const VerifyArgs& args, const ReplayReport& r) {
  for (const ReplayProblem& p : r.problems) fmt::print("{}\n", problem_line(p));
  std::string verdict_text = verdict(r);
  if (verdict_text == "torn tail") {
    verdict_text = r.intact() ? "intact except for torn tails (normal after a crash)"
                              : "TORN TAIL (refused by --mode absolute)";
  } else if (verdict_text == "unproved tail") {
    verdict_text = fmt::format(
        "intact as far as the bytes tell; the end of {} is unproved (its writer stopped without closing "
        "it and the log has not been opened since, or it predates seals)",
        fmt::join(r.unproved_tails, ", "));
  } else if (verdict_text == "corrupt") {
    verdict_text = "CORRUPT";
    if (r.stopped_at) verdict_text += " (stopped at the first corruption; --mode skip checks the rest)";
  }
  const std::string sealed =
      r.unopened_mutations > 0 ? fmt::format(" and {} sealed, not opened", r.unopened_mutations) : "";
  fmt::print("verify {}: {} segments, {} mutations{}, {} payload bytes; {} corruptions ({} bytes skipped); "
             "torn tail {} bytes: {}\n",
             args.dir, r.segments, r.mutations, sealed, r.payload_bytes, r.corruptions, r.skipped_bytes,
             r.torn_tail_bytes, verdict_text);
  if (!r.unopened.empty()) {
    fmt::print("{} encrypted segments: headers and entry or section framing checked, contents not checked "
               "(no --key-file)\n",
               r.unopened.size());
  }
}

void print_json(const VerifyArgs& args, const ReplayReport& r) {
  nlohmann::ordered_json problems = nlohmann::ordered_json::array();
  for (const ReplayProblem& p : r.problems) problems.push_back(problem_json(p));
  auto position = [](const std::optional<Position>& p) {
    return p ? nlohmann::ordered_json(p->to_string()) : nlohmann::ordered_json(nullptr);
  };
  nlohmann::ordered_json j = {
      {"directory", args.dir},
      {"mode", recovery_mode_name(args.mode)},
      {"verdict", verdict(r)},
      {"exit_code", exit_code_for(r)},
      {"stopped_early", r.stopped_at.has_value()},
      {"stopped_at", position(r.stopped_at)},
      {"unread_segments", r.unread_segments},
      {"segments", r.segments},
      {"mutations", r.mutations},
      {"payload_bytes", r.payload_bytes},
      {"bytes_read", r.bytes_read},
      {"corruptions", r.corruptions},
      {"skipped_bytes", r.skipped_bytes},
      {"torn_tail_bytes", r.torn_tail_bytes},
      {"last_position", position(r.last_position)},
      {"unproved_tails", r.unproved_tails},
      {"contents_not_checked", r.unopened},
      {"unopened_mutations", r.unopened_mutations},
      {"problems", problems}};
  fmt::print("{}\n", j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
}

int run_verify(const VerifyArgs& args) {
  auto files = open_log_directory(args.dir);
  if (!files.ok()) return input_error("verify", files.status());
  note_live_writer("verify", args.dir);
  auto keys = load_key_file_option(args.key_file);
  if (!keys.ok()) return input_error("verify", keys.status());
  ReplayOptions options;
  options.mode = args.mode;
  options.keys = *keys;
  options.framing_only = true;
  ReplayProgress progress("verify", *files);
  ReplayReport report = replay_directory(args.dir, options, [&](const ReplayedMutation& m) {
    progress.update(m.position);
    return Status{};
  });
  progress.finish();
  const int code = exit_code_for(report);
  if (code == kExitUsage) return input_error("verify", report.status);
  if (args.format == "json") {
    print_json(args, report);
  } else {
    print_text(args, report);
  }
  return code;
}

}  // namespace

void add_verify_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<VerifyArgs>();
  CLI::App* cmd = app.add_subcommand("verify", "check every segment of a log directory");
  cmd->add_option("DIR", args->dir, "log directory")->required();
  add_mode_option(cmd, args->mode, RecoveryMode::kSkip);
  cmd->add_option("--format", args->format, "output format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  add_key_file_option(cmd, &args->key_file);
  cmd->callback([args, &exit_code] { exit_code = run_verify(*args); });
}

}  // namespace commitlog::tools
