// SPDX-License-Identifier: Apache-2.0
#include "commitlog/lifecycle/archiver.h"

#include <spawn.h>
#include <sys/wait.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <map>

#include "segment/file_name.h"

extern char** environ;

namespace commitlog {
namespace {

std::string_view trim(std::string_view s) {
  const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f'; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

// A logical line of a properties file: physical lines joined where one ends
// in a backslash.
struct Line {
  std::string text;
  int number = 0;  // of its first physical line
};

std::vector<Line> logical_lines(std::string_view text) {
  std::vector<Line> out;
  bool continued = false;
  int number = 0;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    std::string_view physical = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    ++number;
    if (!physical.empty() && physical.back() == '\r') physical.remove_suffix(1);
    std::string_view part = continued ? trim(physical) : physical;
    const bool continues = !part.empty() && part.back() == '\\';
    if (continues) part.remove_suffix(1);
    if (continued) {
      out.back().text += part;
    } else {
      out.push_back({std::string(part), number});
    }
    continued = continues;
  }
  return out;
}

// `digits` decimal digits at the start of `s`, consumed.
bool take_number(std::string_view& s, size_t digits, int* out) {
  if (s.size() < digits) return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + digits, *out);
  if (ec != std::errc() || end != s.data() + digits) return false;
  s.remove_prefix(digits);
  return true;
}

bool take_char(std::string_view& s, char c) {
  if (s.empty() || s.front() != c) return false;
  s.remove_prefix(1);
  return true;
}

std::string substitute(std::string_view word, const std::vector<std::pair<std::string, std::string>>& subs) {
  std::string out;
  for (size_t i = 0; i < word.size();) {
    bool replaced = false;
    if (word[i] == '%') {
      for (const auto& [key, value] : subs) {
        if (word.substr(i + 1, key.size()) == key) {
          out += value;
          i += 1 + key.size();
          replaced = true;
          break;
        }
      }
    }
    if (!replaced) out += word[i++];
  }
  return out;
}

}  // namespace

Result<uint64_t> parse_restore_point(std::string_view text) {
  std::string_view s = trim(text);
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, sec = 0, fraction = 0;
  const bool ok = take_number(s, 4, &y) && take_char(s, ':') && take_number(s, 2, &mo) && take_char(s, ':') &&
                  take_number(s, 2, &d) && take_char(s, ' ') && take_number(s, 2, &h) && take_char(s, ':') &&
                  take_number(s, 2, &mi) && take_char(s, ':') && take_number(s, 2, &sec);
  uint64_t micros = 0;
  bool fraction_ok = true;
  if (ok && take_char(s, '.')) {
    const size_t digits = s.size();
    fraction_ok = (digits == 3 || digits == 6) && take_number(s, digits, &fraction);
    micros = static_cast<uint64_t>(fraction) * (digits == 3 ? 1000 : 1);
  }
  using namespace std::chrono;
  const year_month_day date{year{y}, month{static_cast<unsigned>(mo)}, day{static_cast<unsigned>(d)}};
  if (!ok || !fraction_ok || !s.empty() || !date.ok() || y < 1970 || h > 23 || mi > 59 || sec > 59) {
    return Status::invalid_argument("'" + std::string(text) +
                                    "' is not a time of the form yyyy:MM:dd HH:mm:ss[.SSS|.SSSSSS]");
  }
  const auto at = sys_days(date) + hours(h) + minutes(mi) + seconds(sec);
  return static_cast<uint64_t>(duration_cast<microseconds>(at.time_since_epoch()).count()) + micros;
}

Result<ArchivingProperties> parse_archiving_properties(std::string_view text, const std::string& name_for_errors) {
  ArchivingProperties out;
  for (const Line& line : logical_lines(text)) {
    std::string_view rest = trim(line.text);
    if (rest.empty() || rest.front() == '#' || rest.front() == '!') continue;
    const size_t key_end = rest.find_first_of("=: \t");
    const std::string key(rest.substr(0, key_end));
    rest = key_end == std::string_view::npos ? std::string_view() : trim(rest.substr(key_end));
    if (!rest.empty() && (rest.front() == '=' || rest.front() == ':')) rest = trim(rest.substr(1));
    const std::string value(rest);
    const std::string where = name_for_errors + ":" + std::to_string(line.number) + ": ";
    if (key == "archive_command") {
      out.archive_command = value;
    } else if (key == "restore_command") {
      out.restore_command = value;
    } else if (key == "restore_directories") {
      out.restore_directories.clear();
      std::string_view dirs = value;
      while (!dirs.empty()) {
        const size_t comma = dirs.find(',');
        std::string_view dir = trim(dirs.substr(0, comma));
        if (!dir.empty()) out.restore_directories.emplace_back(dir);
        dirs = comma == std::string_view::npos ? std::string_view() : dirs.substr(comma + 1);
      }
    } else if (key == "restore_point_in_time") {
      if (value.empty()) {
        out.restore_point_in_time_us.reset();
        continue;
      }
      auto at = parse_restore_point(value);
      if (!at.ok()) return Status::invalid_argument(where + key + ": " + at.status().message());
      out.restore_point_in_time_us = *at;
    } else if (key == "precision" || key == "snapshot_commitlog_position") {
      if (!value.empty()) out.warnings.push_back(where + key + " is not supported and is ignored");
    } else {
      out.warnings.push_back(where + key + " is not a commitlog_archiving.properties key and is ignored");
    }
  }
  return out;
}

Result<ArchivingProperties> load_archiving_properties(const std::string& path, FileSystem& fs) {
  auto bytes = read_whole_file(fs, path);
  if (!bytes.ok()) return bytes.status();
  return parse_archiving_properties(std::string_view(reinterpret_cast<const char*>(bytes->data()), bytes->size()),
                                    path);
}

Status run_command(const std::string& command,
                   const std::vector<std::pair<std::string, std::string>>& substitutions) {
  std::vector<std::string> words;
  std::string_view rest = command;
  while (!rest.empty()) {
    const size_t space = rest.find(' ');
    if (space != 0) words.push_back(substitute(rest.substr(0, space), substitutions));
    rest = space == std::string_view::npos ? std::string_view() : rest.substr(space + 1);
  }
  if (words.empty()) return Status::invalid_argument("an empty command");
  std::vector<char*> argv;
  for (std::string& word : words) argv.push_back(word.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int spawn_error = posix_spawnp(&pid, argv[0], nullptr, nullptr, argv.data(), environ);
  const std::string shown = "'" + command + "' (" + words[0] + ")";
  if (spawn_error != 0) return Status::from_errno(spawn_error, "cannot run " + shown);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return Status::from_errno(errno, "waiting for " + shown);
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return {};
  if (WIFEXITED(status)) {
    return Status::io_error(shown + " exited with status " + std::to_string(WEXITSTATUS(status)));
  }
  return Status::io_error(shown + " was killed by signal " + std::to_string(WTERMSIG(status)));
}

ArchiveHook archive_command_hook(const std::string& archive_command) {
  if (archive_command.empty()) return {};
  return [archive_command](const std::string& path, const std::string& name) {
    return run_command(archive_command, {{"path", path}, {"name", name}});
  };
}

Result<uint64_t> restore_segments(const ArchivingProperties& properties, const std::string& staging_dir,
                                  const std::string& live_dir) {
  if (properties.restore_directories.empty()) return uint64_t{0};
  if (properties.restore_command.empty()) {
    return Status::invalid_argument("restore_directories is set but restore_command is not");
  }
  FileSystem& fs = *posix_file_system();
  CL_RETURN_IF_ERROR(fs.create_dirs(staging_dir));
  uint64_t restored = 0;
  for (const std::string& dir : properties.restore_directories) {
    if (!fs.is_directory(dir)) return Status::not_found("restore directory " + dir + " does not exist");
    auto names = fs.list(dir);
    if (!names.ok()) return names.status();
    for (const std::string& name : *names) {
      auto id = parse_segment_file_name(name);
      if (!id.ok()) return Status::invalid_argument(dir + "/" + id.status().message());
      if (!*id) continue;
      const std::string to = staging_dir + "/" + name;
      if (fs.exists(to) || fs.exists(live_dir + "/" + name)) continue;
      CL_RETURN_IF_ERROR(run_command(properties.restore_command, {{"from", dir + "/" + name}, {"to", to}}));
      ++restored;
    }
  }
  return restored;
}

ReplayReport restore_and_replay(const ArchivingProperties& properties, const std::string& staging_dir,
                                const std::string& live_dir, ReplayOptions options,
                                const ReplayHandler& handler) {
  ReplayReport report;
  if (!options.cutoff_time_us) options.cutoff_time_us = properties.restore_point_in_time_us;
  auto restored = restore_segments(properties, staging_dir, live_dir);
  if (!restored.ok()) {
    report.status = restored.status();
    return report;
  }
  std::map<uint64_t, SegmentFile> files;
  for (const std::string* dir : {&staging_dir, &live_dir}) {
    if (!options.file_system->exists(*dir)) continue;
    auto listed = list_segment_files(*options.file_system, *dir);
    if (!listed.ok()) {
      report.status = listed.status();
      return report;
    }
    for (SegmentFile& file : *listed) files[file.id] = std::move(file);  // live_dir last: it wins
  }
  std::vector<SegmentFile> ordered;
  for (auto& [id, file] : files) ordered.push_back(std::move(file));
  return replay_segment_files(ordered, options, handler);
}

}  // namespace commitlog
