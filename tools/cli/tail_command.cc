// SPDX-License-Identifier: Apache-2.0
// `commitlog tail DIR [--from POSITION] [--follow] [--table T]...
//                [--position-file F] [--format jsonl|text]`:
// hands out the mutations of a live log directory, or of a cdc_raw directory
// through its _cdc.idx files, once they are durable (commitlog/tail_reader.h),
// in log order, one line each: `commitlog replay`'s JSON lines, or text.
// Without --follow it stops once nothing more is durable; with it, it polls
// until SIGINT or SIGTERM, then exits 0. --position-file holds where to go on
// from: read at start (over --from), replaced atomically after each batch
// once that batch's lines are written out.
// Exit codes: 0 ok, 1 corruption or a gap (a segment deleted before it was
// read), 2 a usage or input error.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "commitlog/tail_reader.h"
#include "tools/common/commands.h"
#include "tools/cli/live_writer.h"
#include "tools/cli/log_input.h"
#include "tools/cli/mutation_line.h"
#include "tools/common/key_file_option.h"
#include "tools/common/output.h"

namespace commitlog::tools {
namespace {

// The longest wait between looks at the log while following: longer ones
// would not fit the wait for SIGINT or SIGTERM, and are no use.
constexpr double kMaxPollMs = 3600 * 1000;

struct TailArgs {
  std::string dir;
  std::string from;
  bool follow = false;
  std::vector<uint32_t> tables;
  std::string position_file;
  std::string format = "jsonl";
  std::string out;
  double poll_ms = 10;
  std::string key_file;
};

void append_text_line(Output& out, const ReplayedMutation& m) {
  std::string line = fmt::format("{} table {} time_us {} size {} ", m.position.to_string(), m.table, m.time_us,
                                 m.payload.size());
  for (std::byte b : m.payload) {
    const auto c = static_cast<unsigned char>(b);
    if (c == '\\') {
      line += "\\\\";
    } else if (std::isprint(c) != 0) {
      line += static_cast<char>(c);
    } else {
      line += fmt::format("\\x{:02x}", c);
    }
  }
  line += '\n';
  out.append(line);
}

Result<std::optional<Position>> read_position_file(FileSystem& fs, const std::string& path) {
  if (!fs.exists(path)) return std::optional<Position>();
  auto bytes = read_whole_file(fs, path);
  if (!bytes.ok()) return bytes.status();
  std::string text(reinterpret_cast<const char*>(bytes->data()), bytes->size());
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  const std::optional<Position> p = parse_position(text);
  if (!p) return Status::invalid_argument(path + ": expected SEGMENT:OFFSET, found '" + text + "'");
  return std::optional<Position>(p);
}

// Names tried for the new position file: a crash between creating one and
// renaming it leaves it behind, and a later run takes the next name.
constexpr int kTemporaryNames = 64;

// A new file renamed over the old one, then the directory synced: a crash
// leaves the old position or the new one. The new file takes the first name
// FILE.tmp.N that nothing holds and is created exclusively, so no one else's
// file is overwritten or removed; only it is removed when writing it fails.
Status write_position_file(FileSystem& fs, const std::string& path, Position p) {
  const std::string text = p.to_string() + "\n";
  std::string temp;
  Result<std::unique_ptr<File>> file = Status::not_found("");
  for (int n = 0; n < kTemporaryNames && !file.ok(); ++n) {
    temp = path + ".tmp." + std::to_string(n);
    if (fs.exists(temp)) continue;
    file = fs.open(temp, OpenMode::kCreateNew);
    if (!file.ok() && !fs.exists(temp)) return file.status();  // not another's creation racing this one
  }
  if (!file.ok()) {
    return Status::invalid_argument(fmt::format("{}.tmp.0 to .tmp.{} all exist (left by crashed runs?): remove them",
                                                path, kTemporaryNames - 1));
  }
  Status written = (*file)->write_at(0, std::as_bytes(std::span(text.data(), text.size())));
  if (written.ok()) written = (*file)->sync();
  if (written.ok()) written = fs.rename(temp, path);
  if (!written.ok()) {
    fs.remove(temp).ignore();
    return written;
  }
  const size_t slash = path.rfind('/');
  return fs.sync_dir(slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash));
}

// Ok when write_position_file() can replace `path`: its directory is a
// writable directory, and `path`, if there, a regular file this user reads.
// Checked before the first mutation is written, as every input error is.
Status check_position_file(const std::string& path) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  auto refused = [&](const std::string& why) {
    return Status::invalid_argument("--position-file " + path + ": " + why);
  };
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) {
    return refused(dir + ": " + (errno == ENOENT ? "no such directory" : std::strerror(errno)));
  }
  if (!S_ISDIR(st.st_mode)) return refused(dir + ": not a directory");
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    return refused(dir + ": not writable: " + std::strerror(errno));
  }
  if (::stat(path.c_str(), &st) != 0) return errno == ENOENT ? Status{} : refused(std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return refused("not a regular file");
  if (::access(path.c_str(), R_OK) != 0) return refused(std::string("not readable: ") + std::strerror(errno));
  return {};
}

// Waits up to `timeout` for SIGINT or SIGTERM (blocked, so they wait here).
bool stop_requested(const sigset_t& signals, std::chrono::nanoseconds timeout) {
  const auto s = std::chrono::duration_cast<std::chrono::seconds>(timeout);
  timespec wait{static_cast<time_t>(s.count()), static_cast<long>((timeout - s).count())};
  return sigtimedwait(&signals, nullptr, &wait) > 0;
}

int fail(const std::string& message, int code) {
  fmt::print(stderr, "commitlog tail: {}\n", message);
  return code;
}

int run_tail(const TailArgs& args) {
  if (args.format != "jsonl" && args.format != "text") {
    return fail("--format: expected jsonl or text, got '" + args.format + "'", kExitUsage);
  }
  if (!(args.poll_ms > 0 && args.poll_ms <= kMaxPollMs)) {
    return fail(fmt::format("--poll-interval: must be greater than 0 and at most {} ms, got {}", kMaxPollMs,
                            args.poll_ms),
                kExitUsage);
  }
  FileSystem& fs = *posix_file_system();
  TailOptions options;
  options.tables = args.tables;
  auto keys = load_key_file_option(args.key_file);
  if (!keys.ok()) return fail(keys.status().message(), kExitUsage);
  options.keys = *keys;
  if (!args.from.empty()) {
    const std::optional<Position> from = parse_position(args.from);
    if (!from) return fail("--from: expected SEGMENT:OFFSET (two numbers), got '" + args.from + "'", kExitUsage);
    options.from = *from;
  }
  if (!args.position_file.empty()) {
    Status usable = check_position_file(args.position_file);
    if (!usable.ok()) return fail(usable.message(), kExitUsage);
    auto saved = read_position_file(fs, args.position_file);
    if (!saved.ok()) return fail(saved.status().message(), kExitUsage);
    if (*saved) options.from = **saved;
  }
  // A missing directory is waited for with --follow. The messages are
  // verify's, replay's, stat's and dump's: "DIR: no such directory", "DIR: not a directory".
  if (!fs.is_directory(args.dir) && (fs.exists(args.dir) || !args.follow)) {
    return fail(list_segment_files(fs, args.dir).status().message(), kExitUsage);
  }
  auto out = Output::open_for_append(args.out);
  if (!out.ok()) return fail(out.status().to_string(), kExitUsage);
  if (fs.is_directory(args.dir)) note_live_writer("tail", args.dir);
  Output& output = **out;

  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  const auto interval = std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::duration<double, std::milli>(args.poll_ms));

  const bool text = args.format == "text";
  TailReader reader(args.dir, options);
  uint64_t total = 0;
  while (true) {
    auto got = reader.poll([&](const ReplayedMutation& m) {
      text ? append_text_line(output, m) : append_mutation_line(output, m);
      return output.failed() ? output.flush() : Status{};
    });
    if (got.ok() && *got > 0) {
      total += *got;
      if (Status flushed = output.flush(); !flushed.ok()) return fail(flushed.to_string(), kExitUsage);
      if (!args.position_file.empty()) {
        if (Status saved = write_position_file(fs, args.position_file, reader.position()); !saved.ok()) {
          return fail("saving the position: " + saved.to_string(), kExitUsage);
        }
      }
    }
    if (!got.ok()) {
      output.flush().ignore();
      const ErrorCode code = got.status().code();
      return fail(got.status().message() + " (at " + reader.position().to_string() + ")",
                  code == ErrorCode::kCorruption || code == ErrorCode::kNotFound ? kExitCorruption : kExitUsage);
    }
    if (*got > 0) continue;
    if (!args.follow || stop_requested(signals, interval)) break;
  }
  if (Status flushed = output.flush(); !flushed.ok()) return fail(flushed.to_string(), kExitUsage);
  fmt::print(stderr, "tail {}: {} mutations; next position {}\n", args.dir, total, reader.position().to_string());
  return kExitOk;
}

}  // namespace

void add_tail_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<TailArgs>();
  CLI::App* cmd = app.add_subcommand("tail", "write each mutation of a live log once it is durable");
  cmd->add_option("DIR", args->dir, "log directory, or cdc_raw directory")->required();
  cmd->add_option("--from", args->from, "start at this position, SEGMENT:OFFSET");
  cmd->add_flag("--follow,-f", args->follow, "keep following the log until SIGINT or SIGTERM");
  cmd->add_option("--table", args->tables, "only this table (repeatable)");
  cmd->add_option("--position-file", args->position_file,
                  "resume from the position in FILE, and keep it there after each batch");
  cmd->add_option("--format", args->format, "jsonl (commitlog replay's lines) or text")->capture_default_str();
  cmd->add_option("--out", args->out, "write the mutations to FILE instead of stdout");
  cmd->add_option("--poll-interval", args->poll_ms, "ms between looks at the log while following")
      ->capture_default_str();
  add_key_file_option(cmd, &args->key_file);
  cmd->callback([args, &exit_code] { exit_code = run_tail(*args); });
}

}  // namespace commitlog::tools
