// SPDX-License-Identifier: Apache-2.0
// `commitlog stat DIR [--format text|json]`: what a log directory holds: its
// segments (id, size, header, entries, how each ends), entries and payload
// bytes per table, the compression ratio, and the oldest and newest position.
// Each segment is read on its own, like dump (a compressed one through its
// rebuilt image); stat counts damage but does not judge it (verify does).
// Exit 0, or 2 on a usage or input error.
//   text: a summary, a table of segments, a table of tables, positions.
//   json: {"directory", "segments": [...], "tables": [...], "totals": {...},
//          "compression_ratio", "oldest_position", "newest_position", ...}.
#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "commitlog/position.h"
#include "segment/format.h"
#include "segment/segment_image.h"
#include "segment/segment_reader.h"
#include "tools/common/commands.h"
#include "tools/cli/live_writer.h"
#include "tools/cli/log_input.h"
#include "tools/common/progress.h"
#include "tools/cli/report_format.h"
#include "tools/common/key_file_option.h"

namespace commitlog::tools {
namespace {

struct StatArgs {
  std::string dir;
  std::string format = "text";
  std::string key_file;
};

struct SegmentStat {
  LogFile file;
  HeaderProblem problem = HeaderProblem::kNone;
  SegmentHeader header;
  uint64_t entries = 0;
  uint64_t payload_bytes = 0;
  SegmentEnd end;
  uint64_t unsealed_bytes = 0;  // non-zero bytes after the sealed data that are not sealed data
  uint64_t damaged_regions = 0;
  uint64_t damaged_bytes = 0;
  uint64_t stored_bytes = 0;  // sealed bytes past the header, as stored in the file
  uint64_t image_bytes = 0;   // the same before compression
  std::optional<uint32_t> key_id;  // encrypted: the master key it needs
  bool unopened = false;           // encrypted, and no --key-file: contents not read
};

struct TableStat {
  uint64_t entries = 0;
  uint64_t payload_bytes = 0;
};

struct Stamped {
  Position position;
  uint64_t time_us = 0;
};

struct LogStat {
  std::vector<SegmentStat> segments;
  std::map<uint32_t, TableStat> tables;
  uint64_t bytes = 0, entries = 0, payload_bytes = 0, damaged_regions = 0;
  uint64_t stored_bytes = 0, uncompressed_bytes = 0;
  uint64_t compressed_segments = 0;
  std::map<uint32_t, uint64_t> key_ids;  // master key id: segments that need it
  uint64_t unopened = 0;
  std::optional<Stamped> oldest, newest;

  double compression_ratio() const {
    return stored_bytes == 0 ? 1.0
                             : static_cast<double>(uncompressed_bytes) / static_cast<double>(stored_bytes);
  }
};

// Without keys an encrypted segment shows its key id and framing; a key
// given that does not open it is an error.
Status scan(const LoadedSegment& s, const KeyProvider* keys, SegmentStat& seg, LogStat& log, Progress& progress,
            uint64_t base) {
  const SegmentImage image = load_segment_image(s.bytes, s.header, keys, s.file_size);
  if (image.key_id) ++log.key_ids[*image.key_id];
  seg.key_id = image.key_id;
  if (!image.key_status.ok() && keys != nullptr) {
    return Status(image.key_status.code(), seg.file.path + ": " + image.key_status.message());
  }
  for (const SectionDamage& d : image.damage) {
    ++seg.damaged_regions;
    seg.damaged_bytes += d.file_bytes;
  }
  if (!image.key_status.ok()) {
    seg.unopened = true;
    ++log.unopened;
    seg.end = SegmentEnd{EndKind::kTorn, 0, image.sections};
    return {};
  }
  SegmentReader reader(image, s.header);
  while (true) {
    SegmentItem item = reader.next();
    if (auto* e = std::get_if<SegmentEntry>(&item)) {
      ++seg.entries;
      seg.payload_bytes += e->payload.size();
      TableStat& t = log.tables[e->table];
      ++t.entries;
      t.payload_bytes += e->payload.size();
      const Stamped here{{seg.file.id, e->offset}, e->time_us};
      if (!log.oldest) log.oldest = here;
      log.newest = here;
      progress.update(base + std::min(e->offset, seg.file.size));  // image offsets may run past
    } else if (auto* d = std::get_if<SegmentDamage>(&item)) {
      ++seg.damaged_regions;
      seg.damaged_bytes += d->length;
      if (d->kind == DamageKind::kUnsealedBytes) seg.unsealed_bytes += d->length;
    } else {
      seg.end = std::get<SegmentEnd>(item);
      if ((s.header.flags & format::kFlagLz4Sections) != 0) {
        seg.stored_bytes = image.stored_bytes;
        seg.image_bytes = image.image_bytes;
      } else {
        seg.stored_bytes = seg.image_bytes = std::max<uint64_t>(seg.end.offset, format::kHeaderSize) - format::kHeaderSize;
      }
      return {};
    }
  }
}

Result<LogStat> collect(const std::vector<LogFile>& files, const KeyProvider* keys) {
  LogStat log;
  const ByteOffsets offsets = byte_offsets(files);
  Progress progress("stat", offsets.total);
  for (size_t i = 0; i < files.size(); ++i) {
    auto loaded = load_segment(files[i]);
    if (!loaded.ok()) return loaded.status();
    SegmentStat seg{files[i], loaded->problem, loaded->header};
    if (seg.problem == HeaderProblem::kNone) {
      CL_RETURN_IF_ERROR(scan(*loaded, keys, seg, log, progress, offsets.start[i]));
      if ((seg.header.flags & format::kFlagLz4Sections) != 0) ++log.compressed_segments;
    } else {
      seg.end = SegmentEnd{EndKind::kTorn, 0, 0};
    }
    log.bytes += seg.file.size;
    log.entries += seg.entries;
    log.payload_bytes += seg.payload_bytes;
    log.damaged_regions += seg.damaged_regions + (seg.problem == HeaderProblem::kNone ? 0 : 1);
    log.stored_bytes += seg.stored_bytes;
    log.uncompressed_bytes += seg.image_bytes;
    log.segments.push_back(std::move(seg));
  }
  return log;
}

std::string end_text(const SegmentStat& s) {
  if (s.problem != HeaderProblem::kNone) return header_problem_name(s.problem);
  if (s.unopened) return "encrypted";
  return end_kind_name(s.end.kind);
}

nlohmann::ordered_json position_json(const std::optional<Stamped>& p) {
  if (!p) return nullptr;
  return {{"position", p->position.to_string()},
          {"segment", p->position.segment},
          {"offset", p->position.offset},
          {"time_us", p->time_us}};
}

nlohmann::ordered_json key_ids_json(const LogStat& log) {
  nlohmann::ordered_json ids = nlohmann::ordered_json::array();
  for (const auto& [id, segments] : log.key_ids) ids.push_back({{"key_id", id}, {"segments", segments}});
  return ids;
}

void print_json(const StatArgs& args, const LogStat& log) {
  nlohmann::ordered_json segments = nlohmann::ordered_json::array();
  for (const SegmentStat& s : log.segments) {
    const bool ok = s.problem == HeaderProblem::kNone;
    segments.push_back({{"file", s.file.path},
                        {"id", s.file.id},
                        {"size", s.file.size},
                        {"header_problem", ok ? nlohmann::ordered_json(nullptr)
                                              : nlohmann::ordered_json(header_problem_name(s.problem))},
                        {"version", s.header.version},
                        {"flags", s.header.flags},
                        {"created_us", s.header.created_us},
                        {"capacity", s.header.capacity},
                        {"previous_id", s.header.previous_id},
                        {"entries", s.entries},
                        {"payload_bytes", s.payload_bytes},
                        {"sections", s.end.sections},
                        {"end", !ok ? "unreadable header" : s.unopened ? "encrypted" : end_kind_name(s.end.kind)},
                        {"data_end", s.unopened ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(s.end.offset)},
                        {"unsealed_bytes", s.unsealed_bytes},
                        {"stored_bytes", s.stored_bytes},
                        {"image_bytes", s.image_bytes},
                        {"damaged_regions", s.damaged_regions},
                        {"damaged_bytes", s.damaged_bytes},
                        {"key_id", s.key_id ? nlohmann::ordered_json(*s.key_id) : nlohmann::ordered_json(nullptr)},
                        {"contents_read", !s.unopened}});
  }
  nlohmann::ordered_json tables = nlohmann::ordered_json::array();
  for (const auto& [id, t] : log.tables) {
    tables.push_back({{"table", id}, {"entries", t.entries}, {"payload_bytes", t.payload_bytes}});
  }
  nlohmann::ordered_json j = {
      {"directory", args.dir},
      {"totals",
       {{"segments", log.segments.size()},
        {"bytes", log.bytes},
        {"entries", log.entries},
        {"payload_bytes", log.payload_bytes},
        {"damaged_regions", log.damaged_regions}}},
      {"compression_ratio", log.compression_ratio()},
      {"compressed_segments", log.compressed_segments},
      {"key_ids_needed", key_ids_json(log)},
      {"oldest", position_json(log.oldest)},
      {"newest", position_json(log.newest)},
      {"segments", segments},
      {"tables", tables}};
  fmt::print("{}\n", j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
}

void print_text(const StatArgs& args, const LogStat& log) {
  fmt::print("log {}: {} segments, {} bytes on disk, {} entries, {} payload bytes\n", args.dir,
             log.segments.size(), log.bytes, log.entries, log.payload_bytes);
  fmt::print("\n{:<20} {:>12} {:>12} {:>9} {:>12} {:>9}  {:<12} {}\n", "segment id", "size", "data end",
             "entries", "payload", "sections", "end", "created");
  for (const SegmentStat& s : log.segments) {
    fmt::print("{:<20} {:>12} {:>12} {:>9} {:>12} {:>9}  {:<12} {}{}\n", s.file.id, s.file.size,
               s.unopened ? "-" : std::to_string(s.end.offset), s.entries, s.payload_bytes, s.end.sections, end_text(s),
               s.problem == HeaderProblem::kNone ? format_time_us(s.header.created_us) : "-",
               s.damaged_regions > 0
                   ? fmt::format("  ({} damaged regions, {} bytes)", s.damaged_regions, s.damaged_bytes)
                   : "");
  }
  fmt::print("\n{:<12} {:>12} {:>16}\n", "table", "entries", "payload bytes");
  for (const auto& [id, t] : log.tables) fmt::print("{:<12} {:>12} {:>16}\n", id, t.entries, t.payload_bytes);
  fmt::print("\ncompression ratio  {:.2f} ({} of {} segments compressed)\n", log.compression_ratio(),
             log.compressed_segments, log.segments.size());
  auto position_text = [](const std::optional<Stamped>& p) {
    return p ? fmt::format("{}  ({})", p->position.to_string(), format_time_us(p->time_us))
             : std::string("none (no entries)");
  };
  if (!log.key_ids.empty()) {
    std::string ids;
    for (const auto& [id, segments] : log.key_ids) ids += fmt::format("{}{} ({} segments)", ids.empty() ? "" : ", ", id, segments);
    fmt::print("master keys needed {}\n", ids);
  }
  if (log.unopened > 0) {
    fmt::print("encrypted          {} segments' contents not read (no --key-file)\n", log.unopened);
  }
  fmt::print("oldest position    {}\n", position_text(log.oldest));
  fmt::print("newest position    {}\n", position_text(log.newest));
  if (log.damaged_regions > 0) {
    fmt::print("damage             {} regions; run `commitlog verify {}` to classify them\n",
               log.damaged_regions, args.dir);
  }
}

int run_stat(const StatArgs& args) {
  auto files = open_log_directory(args.dir);
  if (!files.ok()) return input_error("stat", files.status());
  note_live_writer("stat", args.dir);
  auto keys = load_key_file_option(args.key_file);
  if (!keys.ok()) return input_error("stat", keys.status());
  auto log = collect(*files, keys->get());
  if (!log.ok()) return input_error("stat", log.status());
  if (args.format == "json") {
    print_json(args, *log);
  } else {
    print_text(args, *log);
  }
  return kExitOk;
}

}  // namespace

void add_stat_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<StatArgs>();
  CLI::App* cmd = app.add_subcommand("stat", "summarize the segments and tables of a log directory");
  cmd->add_option("DIR", args->dir, "log directory")->required();
  cmd->add_option("--format", args->format, "output format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  add_key_file_option(cmd, &args->key_file);
  cmd->callback([args, &exit_code] { exit_code = run_stat(*args); });
}

}  // namespace commitlog::tools
