// SPDX-License-Identifier: Apache-2.0
// `commitlog dump PATH... [--format text|jsonl]`: prints the header, sync
// sections, entries, damage and end of each segment file, or of every segment
// of a directory (in id order). It shows what the reader sees without judging
// it: dump exits 0 on damaged segments too (verify judges), 2 on bad input.
// A compressed segment is shown as the reader sees it, its image rebuilt
// (segment/segment_image.h), after a line about its compressed sections.
//   text:  one aligned line per item, payloads as an escaped preview.
//   jsonl: one JSON object per item, "type" one of header, compression,
//          section, entry, damage, end; entries carry the whole payload in base64.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "segment/codec.h"
#include "segment/format.h"
#include "segment/segment_key.h"
#include "segment/segment_image.h"
#include "segment/segment_reader.h"
#include "tools/cli/base64.h"
#include "tools/common/commands.h"
#include "tools/cli/live_writer.h"
#include "tools/cli/log_input.h"
#include "tools/common/output.h"
#include "tools/common/progress.h"
#include "tools/cli/report_format.h"
#include "tools/common/key_file_option.h"

namespace commitlog::tools {
namespace {

constexpr size_t kPreviewBytes = 48;

struct DumpArgs {
  std::vector<std::string> paths;
  std::string format = "text";
  std::string key_file;
};

// Printable ASCII as is, the rest escaped, cut at kPreviewBytes.
std::string preview(std::span<const std::byte> payload) {
  std::string s = "\"";
  for (size_t i = 0; i < payload.size() && i < kPreviewBytes; ++i) {
    const auto c = static_cast<unsigned char>(payload[i]);
    if (c == '"' || c == '\\') {
      s += '\\';
      s += static_cast<char>(c);
    } else if (c >= 0x20 && c < 0x7f) {
      s += static_cast<char>(c);
    } else {
      s += fmt::format("\\x{:02x}", c);
    }
  }
  s += '"';
  if (payload.size() > kPreviewBytes) s += "...";
  return s;
}

// Prints one segment's items, in one of the two formats.
class Printer {
 public:
  Printer(Output& out, bool json) : out_(out), json_(json) {}

  void header(const LogFile& file, const LoadedSegment& s) {
    const SegmentHeader& h = s.header;
    const bool readable = s.problem == HeaderProblem::kNone;
    if (json_) {
      nlohmann::ordered_json j = {{"type", "header"}, {"file", file.path}, {"size", file.size}};
      if (readable) {
        j.update(nlohmann::ordered_json{{"version", h.version}, {"flags", h.flags}, {"id", h.id},
                                        {"previous_id", h.previous_id}, {"created_us", h.created_us},
                                        {"capacity", h.capacity}, {"sealed_end", seal_json(h)}});
      }
      if (readable) j["compressed"] = (h.flags & format::kFlagLz4Sections) != 0;
      j["problem"] = readable ? nlohmann::ordered_json(nullptr) : header_problem_name(s.problem);
      line(j);
      return;
    }
    out_.append(fmt::format("# {} ({} bytes)\n", file.path, file.size));
    if (!readable) {
      out_.append(fmt::format("header   @0  {}: no entries can be read\n", header_problem_name(s.problem)));
      return;
    }
    out_.append(fmt::format("header   @0  version {}  flags {:#x}  id {}  previous {}  created {}  capacity {}  {}\n",
                            h.version, h.flags, h.id, h.previous_id, format_time_us(h.created_us),
                            h.capacity, seal_text(h)));
  }

  // The seal (segment/segment_seal.h): where the bytes are final, if recorded.
  static nlohmann::ordered_json seal_json(const SegmentHeader& h) {
    return h.sealed_end != 0 ? nlohmann::ordered_json(h.sealed_end) : nlohmann::ordered_json(nullptr);
  }
  static std::string seal_text(const SegmentHeader& h) {
    if (h.seal_damaged) return "seal damaged";
    if (h.sealed_end != 0) return fmt::format("sealed at {}", h.sealed_end);
    return h.version >= 2 ? "not sealed" : "no seal (version 1)";
  }

  // How a compressed or encrypted segment is stored.
  void storage(const LogFile& file, const SegmentImage& image, bool sealed_entries) {
    const auto key_id = image.key_id ? nlohmann::ordered_json(*image.key_id) : nlohmann::ordered_json(nullptr);
    if (json_ && sealed_entries) {
      line({{"type", "sealed_entries"}, {"file", file.path}, {"key_id", key_id}});
    } else if (json_) {
      line({{"type", "compression"},
            {"file", file.path},
            {"sections", image.sections},
            {"stored_bytes", image.stored_bytes},
            {"image_bytes", image.image_bytes},
            {"key_id", key_id}});
    } else {
      if (sealed_entries) {
        out_.append(fmt::format("sealed   entries, master key {}\n", image.key_id ? std::to_string(*image.key_id) : "unreadable"));
      } else if (image.key_id) {
        out_.append(fmt::format("sealed   {} sections, {} bytes stored for {} image bytes, master key {}\n",
                                image.sections, image.stored_bytes, image.image_bytes, *image.key_id));
      } else {
        out_.append(fmt::format("lz4      {} compressed sections, {} bytes stored for {} image bytes\n",
                                image.sections, image.stored_bytes, image.image_bytes));
      }
    }
  }

  // Damage to compressed sections, in file offsets.
  void damage(const LogFile& file, const SectionDamage& d) {
    damage_line(file, d.file_offset, damage_kind_name(d.kind), d.file_bytes, d.durable, true);
  }

  // `synced` only for segments whose markers carry it (format::kFlagSyncedMarks).
  void section(const LogFile& file, const SegmentReader::Section& s) {
    if (json_) {
      nlohmann::ordered_json j = {
          {"type", "section"}, {"file", file.path}, {"offset", s.marker}, {"next", s.next_marker}};
      if (s.synced) j["synced"] = *s.synced;
      line(j);
    } else {
      const std::string synced = s.synced ? fmt::format("  synced @{}", *s.synced) : "";
      out_.append(fmt::format("section  @{}  next marker @{}{}  ({} bytes)\n", s.marker,
                              s.next_marker, synced, s.next_marker - s.marker));
    }
  }

  void entry(const LogFile& file, uint64_t segment, const SegmentEntry& e) {
    if (json_) {
      line({{"type", "entry"},
            {"file", file.path},
            {"segment", segment},
            {"offset", e.offset},
            {"table", e.table},
            {"time_us", e.time_us},
            {"size", e.payload.size()},
            {"payload", base64(e.payload)}});
    } else {
      out_.append(fmt::format("  entry  @{}  table {}  size {}  time {}  {}\n", e.offset, e.table,
                              e.payload.size(), format_time_us(e.time_us), preview(e.payload)));
    }
  }

  // Damage the reader passed over, with whether a later write proves it
  // durable, which makes the replayer call it corruption even in a run's
  // newest segment (segment/damage_classifier.h); dump reads one file and
  // cannot know whether it is its run's newest.
  void damage(const LogFile& file, const SegmentDamage& d) {
    damage_line(file, d.offset, damage_kind_name(d.kind), d.length, d.durable, false);
  }

  void end(const LogFile& file, const SegmentEnd& e) {
    if (json_) {
      line({{"type", "end"},
            {"file", file.path},
            {"offset", e.offset},
            {"kind", end_kind_name(e.kind)},
            {"sections", e.sections}});
    } else {
      out_.append(fmt::format("end      @{}  {}  ({} sections)\n", e.offset, end_kind_name(e.kind), e.sections));
    }
  }

 private:
  void damage_line(const LogFile& file, uint64_t offset, const char* kind, uint64_t bytes, bool durable,
                   bool in_file) {
    if (json_) {
      nlohmann::ordered_json j = {{"type", "damage"}, {"file", file.path},   {"offset", offset},
                                  {"kind", kind},     {"bytes", bytes},      {"durable", durable},
                                  {"in_file", in_file}};
      line(j);
      return;
    }
    out_.append(fmt::format("damage   @{}{}  {}  ({} bytes; {})\n", offset, in_file ? " (file)" : "", kind, bytes,
                            durable ? "later writes prove it was durable" : "nothing after it proves it durable"));
  }

  void line(const nlohmann::ordered_json& j) {
    out_.append(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    out_.append("\n");
  }

  Output& out_;
  bool json_;
};

// An encrypted segment whose key is missing or wrong is an input error.
// Every segment's key is checked before the first line is printed, so that
// stdout then gets nothing; unreadable files are left to load_segment(),
// which reports them in order.
Status check_keys(const std::vector<LogFile>& files, const KeyProvider* keys) {
  for (const LogFile& file : files) {
    auto f = posix_file_system()->open(file.path, OpenMode::kRead);
    if (!f.ok()) continue;
    std::byte bytes[format::kKeyBlockOffset + format::kKeyBlockSize] = {};
    auto got = (*f)->read_at(0, bytes);
    if (!got.ok()) continue;
    const std::span<const std::byte> start{bytes, *got};
    SegmentHeader header;
    if (decode_bounded_segment_header(start, &header) != HeaderProblem::kNone ||
        (header.flags & format::kFlagEncrypted) == 0) {
      continue;
    }
    const crypto::OpenedSegmentKey opened = crypto::open_segment_key(start, header.id, keys);
    if (opened.block_intact && !opened.data_key) {
      return Status(opened.status.code(), file.path + ": " + opened.status.message());
    }
  }
  return {};
}

Status dump_segment(const LogFile& file, const LoadedSegment& s, const KeyProvider* keys, Printer& printer,
                    Progress& progress, uint64_t base) {
  printer.header(file, s);
  if (s.problem != HeaderProblem::kNone) return {};
  const SegmentImage image = load_segment_image(s.bytes, s.header, keys, s.file_size);
  if (!image.key_status.ok()) return Status(image.key_status.code(), file.path + ": " + image.key_status.message());
  if ((s.header.flags & (format::kFlagLz4Sections | format::kFlagEncrypted)) != 0) {
    printer.storage(file, image, format::seals_entries(s.header.flags));
    for (const SectionDamage& d : image.damage) printer.damage(file, d);
  }
  SegmentReader reader(image, s.header);
  uint64_t section = 0;  // the marker of the last section printed
  while (true) {
    SegmentItem item = reader.next();
    auto* entry = std::get_if<SegmentEntry>(&item);
    auto* damage = std::get_if<SegmentDamage>(&item);
    const SegmentReader::Section here = reader.section();
    const bool in_section = entry != nullptr || (damage != nullptr && damage->offset > here.marker &&
                                                 damage->offset < here.next_marker);
    if (in_section && here.marker != section) {
      section = here.marker;
      printer.section(file, here);
    }
    if (entry != nullptr) {
      printer.entry(file, s.header.id, *entry);
      progress.update(base + std::min(entry->offset, file.size));  // image offsets may run past
    } else if (damage != nullptr) {
      printer.damage(file, *damage);
    } else {
      printer.end(file, std::get<SegmentEnd>(item));
      return {};
    }
  }
}

int run_dump(const DumpArgs& args) {
  auto files = open_log_paths(args.paths);
  if (!files.ok()) return input_error("dump", files.status());
  auto keys = load_key_file_option(args.key_file);
  if (!keys.ok()) return input_error("dump", keys.status());
  if (Status keyed = check_keys(*files, keys->get()); !keyed.ok()) return input_error("dump", keyed);
  note_live_writers("dump", args.paths);
  auto out = Output::open("-");
  if (!out.ok()) return input_error("dump", out.status());
  Printer printer(**out, args.format == "jsonl");
  const ByteOffsets offsets = byte_offsets(*files);
  Progress progress("dump", offsets.total);
  for (size_t i = 0; i < files->size(); ++i) {
    auto segment = load_segment((*files)[i]);
    Status dumped = segment.ok() ? dump_segment((*files)[i], *segment, keys->get(), printer, progress, offsets.start[i])
                                 : segment.status();
    if (!dumped.ok()) {
      (*out)->flush().ignore();  // what was dumped so far stays visible
      progress.finish();
      return input_error("dump", dumped);
    }
  }
  progress.finish();
  Status flushed = (*out)->flush();
  if (!flushed.ok()) return input_error("dump", flushed);
  return kExitOk;
}

}  // namespace

void add_dump_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<DumpArgs>();
  CLI::App* cmd = app.add_subcommand(
      "dump", "print the header, sync sections and entries of segment files or log directories");
  cmd->add_option("PATH", args->paths, "segment files or log directories")->required();
  cmd->add_option("--format", args->format, "output format")
      ->check(CLI::IsMember({"text", "jsonl"}))
      ->capture_default_str();
  add_key_file_option(cmd, &args->key_file);
  cmd->callback([args, &exit_code] { exit_code = run_dump(*args); });
}

}  // namespace commitlog::tools
