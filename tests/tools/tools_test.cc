// SPDX-License-Identifier: Apache-2.0
// The offline subcommands (dump, verify, replay, stat) through the binary:
// their output formats, exit codes, and every kind of bad input. The contract
// under test is docs/tools.md.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "commitlog/commit_log.h"
#include "commitlog/replayer.h"
#include "segment/checksum.h"
#include "segment/file_name.h"
#include "segment/format.h"
#include "segment/segment_reader.h"
#include "tests/support/file_modes.h"
#include "tests/support/log_files.h"
#include "tests/support/run_cli.h"
#include "tests/support/temp_dir.h"

namespace commitlog::testing {
namespace {

using nlohmann::json;

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::string unbase64(const std::string& s) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  REQUIRE(s.size() % 4 == 0);
  std::string out;
  for (size_t i = 0; i < s.size(); i += 4) {
    const int a = value(s[i]), b = value(s[i + 1]);
    REQUIRE(a >= 0);
    REQUIRE(b >= 0);
    out += static_cast<char>(a << 2 | b >> 4);
    if (s[i + 2] == '=') break;
    const int c = value(s[i + 2]);
    REQUIRE(c >= 0);
    out += static_cast<char>((b & 15) << 4 | c >> 2);
    if (s[i + 3] == '=') break;
    const int d = value(s[i + 3]);
    REQUIRE(d >= 0);
    out += static_cast<char>((c & 3) << 6 | d);
  }
  return out;
}

struct Written {
  uint32_t table;
  std::string payload;
  Position position;
  uint64_t time_us = 0;
};

// Writes `count` mutations (payloads of varied length, 0 to 700 bytes,
// tables 0..4) through the library with 64 KiB segments and the batch
// policy, in batches of 20 (one sync section each), and closes the log.
std::vector<Written> write_log(const std::string& dir, int count = 600,
                               Compression compression = Compression::kNone) {
  Options options;
  options.directory = dir;
  options.compression = compression;
  options.sync_policy = "batch";
  options.segment_size = 64 << 10;
  auto log = CommitLog::open(options);
  REQUIRE(log.ok());
  std::vector<Written> written;
  for (int i = 0; i < count; i += 20) {
    std::vector<std::string> payloads;
    std::vector<Mutation> batch;
    for (int j = i; j < i + 20 && j < count; ++j) {
      std::string p = fmt::format("mutation {} ", j);
      p.resize(static_cast<size_t>(j % 23 == 0 ? 0 : j * 37 % 700), static_cast<char>('a' + j % 26));
      payloads.push_back(std::move(p));
    }
    for (size_t k = 0; k < payloads.size(); ++k) {
      batch.push_back({static_cast<uint32_t>((i + k) % 5), std::as_bytes(std::span(payloads[k]))});
    }
    auto range = (*log)->append_batch(batch);
    REQUIRE(range.ok());
    for (size_t k = 0; k < payloads.size(); ++k) {
      written.push_back({batch[k].table, payloads[k], {}});
    }
  }
  REQUIRE((*log)->close().ok());
  // Positions as the library's replayer sees them.
  size_t n = 0;
  ReplayReport report = replay_directory(dir, {}, [&](const ReplayedMutation& m) {
    REQUIRE(n < written.size());
    written[n].time_us = m.time_us;
    written[n++].position = m.position;
    return Status{};
  });
  REQUIRE(report.status.ok());
  REQUIRE(n == written.size());
  return written;
}

std::vector<SegmentFile> segments_of(const std::string& dir) {
  auto files = list_segment_files(*posix_file_system(), dir);
  REQUIRE(files.ok());
  return *files;
}

std::string path_of(const std::string& dir, uint64_t segment) {
  for (const SegmentFile& f : segments_of(dir)) {
    if (f.id == segment) return f.path;
  }
  FAIL("no segment " << segment);
  return {};
}

std::vector<std::byte> read_bytes(const std::string& path) {
  auto bytes = read_whole_file(*posix_file_system(), path);
  REQUIRE(bytes.ok());
  return *bytes;
}

void write_bytes(const std::string& path, const std::vector<std::byte>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  REQUIRE(out.good());
}

// Zeros a segment's seal, as if its writer had died before sealing it: the
// tests below make a crashed log out of a closed one.
void unseal(std::vector<std::byte>& bytes) {
  std::fill_n(bytes.begin() + format::kHeaderSealOffset, format::kSealSize, std::byte{0});
}

// Flips one bit inside the payload of the entry at `position`.
void damage_payload(const std::string& dir, const Position& position) {
  const std::string path = path_of(dir, position.segment);
  auto bytes = read_bytes(path);
  bytes[position.offset + format::kEntryHeaderSize + 1] ^= std::byte{0x10};
  write_bytes(path, bytes);
}

// Where the sealed data of segment file `path` ends, as its reader says.
SegmentEnd end_of(const std::string& path) {
  auto bytes = read_bytes(path);
  SegmentHeader header;
  REQUIRE(decode_segment_header(bytes, &header) == HeaderProblem::kNone);
  const SegmentImage image = load_segment_image(bytes, header);
  SegmentReader reader(image, header);
  while (true) {
    SegmentItem item = reader.next();
    if (auto* end = std::get_if<SegmentEnd>(&item)) return *end;
  }
}

std::vector<json> json_lines(const std::string& text) {
  std::vector<json> out;
  for (const std::string& line : lines(text)) out.push_back(json::parse(line));
  return out;
}

}  // namespace

TEST_CASE("tools: dump prints header, sync sections, entries and end, as text and as jsonl") {
  TempDir dir;
  const auto written = write_log(dir.path(), 300);
  const auto files = segments_of(dir.path());
  REQUIRE(files.size() >= 2);

  CliResult text = run_cli({"dump", dir.path()});
  CHECK(text.exit_code == 0);
  CHECK(text.err.empty());
  size_t entries = 0, headers = 0, sections = 0, ends = 0;
  for (const std::string& line : lines(text.out)) {
    if (line.starts_with("header ")) ++headers;
    if (line.starts_with("section ")) ++sections;
    if (line.starts_with("  entry ")) ++entries;
    if (line.starts_with("end ")) ++ends;
  }
  CHECK(headers == files.size());
  CHECK(ends == files.size());
  CHECK(sections >= written.size() / 20);
  CHECK(entries == written.size());
  CHECK(text.out.find(fmt::format("# {}", files[0].path)) != std::string::npos);
  CHECK(text.out.find("\"mutation 1 ") != std::string::npos);

  CliResult jsonl = run_cli({"dump", "--format", "jsonl", files[0].path, files[1].path});
  CHECK(jsonl.exit_code == 0);
  std::vector<json> records = json_lines(jsonl.out);
  REQUIRE(!records.empty());
  CHECK(records.front()["type"] == "header");
  CHECK(records.front()["id"] == files[0].id);
  CHECK(records.front()["version"] == format::kFormatVersion);
  CHECK(records.front()["problem"].is_null());
  size_t n = 0;
  for (const json& r : records) {
    if (r["type"] != "entry") continue;
    REQUIRE(n < written.size());
    CHECK(r["segment"] == written[n].position.segment);
    CHECK(r["offset"] == written[n].position.offset);
    CHECK(r["table"] == written[n].table);
    CHECK(r["size"] == written[n].payload.size());
    CHECK(unbase64(r["payload"]) == written[n].payload);
    ++n;
  }
  CHECK(n > 0);
  CHECK(records.back()["type"] == "end");
  CHECK(records.back()["kind"] == "closed");
  CHECK(records[1]["type"] == "section");
  CHECK(records[1]["offset"] == format::kFirstMarkerOffset);
  // Nothing was durable before the first marker but the header.
  CHECK(records[1]["synced"] == format::kFirstMarkerOffset);
  uint64_t last_synced = 0;  // per segment
  for (const json& r : records) {
    if (r["type"] == "header") last_synced = 0;
    if (r["type"] != "section") continue;
    CHECK(r["synced"].get<uint64_t>() >= last_synced);
    CHECK(r["synced"].get<uint64_t>() <= r["offset"].get<uint64_t>());
    last_synced = r["synced"].get<uint64_t>();
  }
}

TEST_CASE("tools: verify an intact log, as text and as json") {
  TempDir dir;
  const auto written = write_log(dir.path(), 200);

  CliResult text = run_cli({"verify", dir.path()});
  CHECK(text.exit_code == 0);
  CHECK(text.err.empty());
  REQUIRE(lines(text.out).size() == 1);
  CHECK(text.out.find(fmt::format("{} mutations", written.size())) != std::string::npos);
  CHECK(text.out.find(": intact") != std::string::npos);

  CliResult j = run_cli({"verify", dir.path(), "--format", "json", "--mode", "tolerate-torn-tail"});
  CHECK(j.exit_code == 0);
  json report = json::parse(j.out);
  CHECK(report["verdict"] == "intact");
  CHECK(report["mode"] == "tolerate-torn-tail");
  CHECK(report["mutations"] == written.size());
  CHECK(report["segments"] == segments_of(dir.path()).size());
  CHECK(report["problems"].empty());
  CHECK(report["last_position"] == written.back().position.to_string());
}

TEST_CASE("tools: a torn tail of the newest segment is reported and verify still exits 0") {
  TempDir dir;
  const auto written = write_log(dir.path(), 200);
  const std::string newest = segments_of(dir.path()).back().path;
  // A crash while the last section was being written: its marker and the
  // bytes after it hold garbage.
  const SegmentEnd end = end_of(newest);
  REQUIRE(end.kind == EndKind::kClosed);
  auto bytes = read_bytes(newest);
  for (uint64_t i = end.offset; i < end.offset + 200; ++i) bytes[i] = std::byte{0xab};
  unseal(bytes);
  write_bytes(newest, bytes);

  CliResult text = run_cli({"verify", dir.path()});
  CHECK(text.exit_code == 0);
  const auto out = lines(text.out);
  REQUIRE(out.size() == 2);
  CHECK(out[0] == fmt::format("torn tail: {}: offset {}: bad sync marker (200 bytes dropped)", newest, end.offset));
  CHECK(out[1].find("intact except for torn tails") != std::string::npos);

  CliResult j = run_cli({"verify", dir.path(), "--format", "json"});
  CHECK(j.exit_code == 0);
  json report = json::parse(j.out);
  CHECK(report["verdict"] == "torn tail");
  REQUIRE(report["problems"].size() == 1);
  CHECK(report["problems"][0]["file"] == newest);
  CHECK(report["problems"][0]["offset"] == end.offset);
  CHECK(report["problems"][0]["corruption"] == false);
  CHECK(report["torn_tail_bytes"].get<uint64_t>() > 0);

  CliResult replay = run_cli({"replay", dir.path()});
  CHECK(replay.exit_code == 0);
  CHECK(lines(replay.out).size() == written.size());
}

TEST_CASE("tools: damage in the middle of the log") {
  TempDir dir;
  const auto written = write_log(dir.path(), 600);
  REQUIRE(segments_of(dir.path()).size() >= 3);
  const size_t victim = 5;  // in the first segment
  REQUIRE(written[victim].position.segment == segments_of(dir.path()).front().id);
  damage_payload(dir.path(), written[victim].position);
  const std::string file = path_of(dir.path(), written[victim].position.segment);
  const std::string problem =
      fmt::format("corruption: {}: offset {}: bad payload checksum", file, written[victim].position.offset);

  SUBCASE("verify names the file, the offset and the kind, and exits 1") {
    CliResult skip = run_cli({"verify", dir.path()});
    CHECK(skip.exit_code == 1);
    const auto out = lines(skip.out);
    REQUIRE(out.size() == 2);
    CHECK(out[0].starts_with(problem));
    CHECK(out[1].find(fmt::format("{} mutations", written.size() - 1)) != std::string::npos);
    CHECK(out[1].ends_with("CORRUPT"));

    CliResult strict = run_cli({"verify", dir.path(), "--mode", "strict", "--format", "json"});
    CHECK(strict.exit_code == 1);
    json report = json::parse(strict.out);
    CHECK(report["verdict"] == "corrupt");
    CHECK(report["stopped_early"] == true);
    CHECK(report["mutations"] == victim);
    REQUIRE(report["problems"].size() == 1);
    CHECK(report["problems"][0]["file"] == file);
    CHECK(report["problems"][0]["offset"] == written[victim].position.offset);
    CHECK(report["problems"][0]["kind"] == "bad payload checksum");
  }

  SUBCASE("replay --mode skip writes every other mutation and exits 1") {
    CliResult skip = run_cli({"replay", dir.path(), "--mode", "skip"});
    CHECK(skip.exit_code == 1);
    std::vector<json> out = json_lines(skip.out);
    REQUIRE(out.size() == written.size() - 1);
    for (size_t i = 0, w = 0; i < out.size(); ++i, ++w) {
      if (w == victim) ++w;
      CHECK(out[i]["offset"] == written[w].position.offset);
      CHECK(unbase64(out[i]["payload"]) == written[w].payload);
    }
    CHECK(lines(skip.err).front().starts_with(problem));
  }

  SUBCASE("replay --mode strict stops at the damage and exits 1") {
    CliResult strict = run_cli({"replay", dir.path()});
    CHECK(strict.exit_code == 1);
    CHECK(lines(strict.out).size() == victim);
    CHECK(lines(strict.err).front().starts_with(problem));
    CHECK(strict.err.find(fmt::format("stopped at {} (tolerate-torn-tail)", written[victim].position.to_string())) !=
          std::string::npos);
  }

  SUBCASE("stat counts the damage and still exits 0") {
    CliResult stat = run_cli({"stat", dir.path(), "--format", "json"});
    CHECK(stat.exit_code == 0);
    json report = json::parse(stat.out);
    CHECK(report["totals"]["damaged_regions"] == 1);
    CHECK(report["segments"][0]["damaged_regions"] == 1);
  }

  SUBCASE("dump shows the damage where it is, and that later markers prove it flushed") {
    CliResult dump = run_cli({"dump", "--format", "jsonl", file});
    CHECK(dump.exit_code == 0);
    bool found = false;
    for (const json& r : json_lines(dump.out)) {
      if (r["type"] == "damage") {
        CHECK(r["offset"] == written[victim].position.offset);
        CHECK(r["kind"] == "bad payload checksum");
        CHECK(r["durable"] == true);
        found = true;
      }
    }
    CHECK(found);
  }

  SUBCASE("dump says when nothing valid follows the damage") {
    // As if the process died before it sealed again: the markers after the
    // last entry's section (the close's empty section and the end marker)
    // were never written.
    const Position last = written.back().position;
    const std::string newest = path_of(dir.path(), last.segment);
    uint64_t section_end = 0;
    for (const json& r : json_lines(run_cli({"dump", "--format", "jsonl", newest}).out)) {
      if (r["type"] == "section" && r["offset"].get<uint64_t>() < last.offset) {
        section_end = r["next"].get<uint64_t>();
      }
    }
    REQUIRE(section_end > last.offset);
    auto bytes = read_bytes(newest);
    std::fill(bytes.begin() + static_cast<ptrdiff_t>(section_end),
              bytes.begin() + static_cast<ptrdiff_t>(section_end + 32), std::byte{0});
    unseal(bytes);
    write_bytes(newest, bytes);
    damage_payload(dir.path(), last);
    bool found = false;
    for (const json& r : json_lines(run_cli({"dump", "--format", "jsonl", newest}).out)) {
      if (r["type"] == "damage" && r["offset"] == last.offset) {
        CHECK(r["durable"] == false);
        found = true;
      }
    }
    CHECK(found);
    CliResult text = run_cli({"dump", newest});
    CHECK(text.exit_code == 0);
    CHECK(text.out.find(fmt::format("damage   @{}  bad payload checksum", last.offset)) !=
          std::string::npos);
    CHECK(text.out.find("; nothing after it proves it durable)") != std::string::npos);
  }
}

TEST_CASE("tools: replay writes each mutation as a JSON line, in log order, with a summary on stderr") {
  TempDir dir;
  const auto written = write_log(dir.path(), 300);
  CliResult r = run_cli({"replay", dir.path()});
  CHECK(r.exit_code == 0);
  const auto out = lines(r.out);
  REQUIRE(out.size() == written.size());
  for (size_t i = 0; i < out.size(); ++i) {
    const Written& w = written[i];
    // The exact shape, key order included: scripts may match it textually.
    const std::string prefix =
        fmt::format(R"({{"segment":{},"offset":{},"table":{},"time_us":{},"size":{},"payload":")", w.position.segment,
                    w.position.offset, w.table, w.time_us, w.payload.size());
    REQUIRE(out[i].starts_with(prefix));
    REQUIRE(out[i].ends_with("\"}"));
    CHECK(unbase64(out[i].substr(prefix.size(), out[i].size() - prefix.size() - 2)) == w.payload);
  }
  // Not a terminal: no progress bar, only the summary.
  const auto err = lines(r.err);
  REQUIRE(err.size() == 1);
  CHECK(err[0].find(fmt::format("{} mutations", written.size())) != std::string::npos);
  CHECK(err[0].find("MB/s") != std::string::npos);
  CHECK(err[0].find(fmt::format("{} segments", segments_of(dir.path()).size())) != std::string::npos);
}

TEST_CASE("tools: replay --table, --from and --out") {
  TempDir dir, out_dir;
  const auto written = write_log(dir.path(), 300);

  CliResult tables = run_cli({"replay", dir.path(), "--table", "1", "--table", "3"});
  CHECK(tables.exit_code == 0);
  std::vector<const Written*> expected;
  for (const Written& w : written) {
    if (w.table == 1 || w.table == 3) expected.push_back(&w);
  }
  std::vector<json> got = json_lines(tables.out);
  REQUIRE(got.size() == expected.size());
  for (size_t i = 0; i < got.size(); ++i) CHECK(got[i]["offset"] == expected[i]->position.offset);

  // From the first mutation of the second segment, given by its position.
  size_t first = 0;
  while (written[first].position.segment == written[0].position.segment) ++first;
  const Position from = written[first + 3].position;
  const std::string file = out_dir.file("mutations.jsonl");
  CliResult r = run_cli({"replay", dir.path(), "--from", from.to_string(), "--out", file});
  CHECK(r.exit_code == 0);
  CHECK(r.out.empty());
  got = json_lines(slurp(file));
  REQUIRE(got.size() == written.size() - first - 3);
  CHECK(got.front()["segment"] == from.segment);
  CHECK(got.front()["offset"] == from.offset);
  CHECK(unbase64(got.back()["payload"]) == written.back().payload);

  // An existing file is not the command's to overwrite.
  const std::string before = slurp(file);
  CliResult again = run_cli({"replay", dir.path(), "--out", file});
  CHECK(again.exit_code == 2);
  CHECK(again.err.find(file + " exists; give a new file (it is never overwritten)") != std::string::npos);
  CHECK(slurp(file) == before);
}

TEST_CASE("tools: replay --until skips mutations written after that time, given in each form") {
  TempDir dir;
  const auto written = write_log(dir.path(), 300);
  const uint64_t cutoff = written[written.size() / 2].time_us;
  size_t expected = 0;
  for (const Written& w : written) expected += w.time_us <= cutoff;
  REQUIRE(expected < written.size());
  const uint64_t seconds = cutoff / 1000000;
  const auto t = static_cast<std::time_t>(seconds);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  const std::string iso = fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:06}Z", tm.tm_year + 1900,
                                      tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, cutoff % 1000000);
  std::string cassandra = iso.substr(0, iso.size() - 1);  // Cassandra's restore_point_in_time form
  cassandra[4] = cassandra[7] = ':';
  cassandra[10] = ' ';
  for (const std::string& until : {std::to_string(cutoff), iso, cassandra}) {
    CAPTURE(until);
    CliResult r = run_cli({"replay", dir.path(), "--until", until});
    CHECK(r.exit_code == 0);
    std::vector<json> got = json_lines(r.out);
    CHECK(got.size() == expected);
    for (const json& line : got) CHECK(line["time_us"].get<uint64_t>() <= cutoff);
  }
  // Whole seconds: everything of that second after its start is left out.
  CliResult r = run_cli({"replay", dir.path(), "--until", iso.substr(0, 19) + "Z"});
  CHECK(r.exit_code == 0);
  for (const json& line : json_lines(r.out)) CHECK(line["time_us"].get<uint64_t>() <= seconds * 1000000);
}

TEST_CASE("tools: stat reports segments, tables, compression ratio and positions") {
  TempDir dir;
  const auto written = write_log(dir.path(), 300);
  const auto files = segments_of(dir.path());

  CliResult j = run_cli({"stat", dir.path(), "--format", "json"});
  CHECK(j.exit_code == 0);
  json s = json::parse(j.out);
  CHECK(s["totals"]["segments"] == files.size());
  CHECK(s["totals"]["entries"] == written.size());
  CHECK(s["totals"]["damaged_regions"] == 0);
  CHECK(s["compression_ratio"] == 1.0);
  CHECK(s["oldest"]["position"] == written.front().position.to_string());
  CHECK(s["newest"]["position"] == written.back().position.to_string());
  REQUIRE(s["segments"].size() == files.size());
  for (size_t i = 0; i < files.size(); ++i) {
    CHECK(s["segments"][i]["id"] == files[i].id);
    CHECK(s["segments"][i]["size"] == std::filesystem::file_size(files[i].path));
    CHECK(s["segments"][i]["end"] == "closed");
  }
  // data_end is where dump's end record says the data ends; the header's
  // seal, as dump shows it, is past the end marker there.
  CliResult dump = run_cli({"dump", dir.path(), "--format", "jsonl"});
  REQUIRE(dump.exit_code == 0);
  std::map<std::string, uint64_t> data_end, header_seal;
  for (const json& line : json_lines(dump.out)) {
    if (line["type"] == "end") data_end[line["file"].get<std::string>()] = line["offset"].get<uint64_t>();
    if (line["type"] == "header") header_seal[line["file"].get<std::string>()] = line["sealed_end"].get<uint64_t>();
  }
  for (size_t i = 0; i < files.size(); ++i) {
    CAPTURE(files[i].path);
    CHECK(s["segments"][i]["data_end"] == data_end.at(files[i].path));
    CHECK(header_seal.at(files[i].path) == data_end.at(files[i].path) + format::kMarkerSize);
  }
  std::map<uint32_t, uint64_t> per_table;
  for (const Written& w : written) ++per_table[w.table];
  REQUIRE(s["tables"].size() == per_table.size());
  for (const json& t : s["tables"]) CHECK(t["entries"] == per_table[t["table"].get<uint32_t>()]);

  CliResult text = run_cli({"stat", dir.path()});
  CHECK(text.exit_code == 0);
  CHECK(text.out.find(fmt::format("{} segments", files.size())) != std::string::npos);
  CHECK(text.out.find("compression ratio  1.00") != std::string::npos);
  CHECK(text.out.find("oldest position    " + written.front().position.to_string()) != std::string::npos);
  CHECK(text.out.find("newest position    " + written.back().position.to_string()) != std::string::npos);
}

TEST_CASE("tools: compressed segments through dump, verify, replay and stat") {
  TempDir dir;
  const auto written = write_log(dir.path(), 300, Compression::kLz4);

  CliResult replay = run_cli({"replay", dir.path()});
  CHECK(replay.exit_code == 0);
  std::vector<json> got = json_lines(replay.out);
  REQUIRE(got.size() == written.size());
  for (size_t i = 0; i < got.size(); ++i) {
    CHECK(got[i]["offset"] == written[i].position.offset);
    CHECK(unbase64(got[i]["payload"]) == written[i].payload);
  }
  CHECK(run_cli({"verify", dir.path()}).exit_code == 0);

  CliResult stat = run_cli({"stat", dir.path(), "--format", "json"});
  CHECK(stat.exit_code == 0);
  json s = json::parse(stat.out);
  CHECK(s["compressed_segments"] == segments_of(dir.path()).size());
  CHECK(s["compression_ratio"].get<double>() > 1.5);  // the payloads are runs of one letter
  CHECK(s["totals"]["entries"] == written.size());

  CliResult dump = run_cli({"dump", "--format", "jsonl", dir.path()});
  CHECK(dump.exit_code == 0);
  size_t entries = 0, compression = 0;
  for (const json& r : json_lines(dump.out)) {
    if (r["type"] == "entry") CHECK(unbase64(r["payload"]) == written[entries++].payload);
    if (r["type"] == "compression") ++compression;
    if (r["type"] == "header") CHECK(r["compressed"] == true);
  }
  CHECK(entries == written.size());
  CHECK(compression == segments_of(dir.path()).size());
}

TEST_CASE("tools: bad input gives one line naming the file and exit 2, from every command") {
  TempDir root;
  const std::string good = root.file("good");
  write_log(good, 40);
  const SegmentFile segment = segments_of(good).front();
  const std::vector<std::byte> segment_bytes = read_bytes(segment.path);
  const std::string name = std::filesystem::path(segment.path).filename().string();

  struct BadInput {
    const char* what;
    std::string dir;   // for verify, replay, stat and dump
    std::string file;  // the file the message must name
    std::string message;
  };
  std::vector<BadInput> inputs;
  auto make_dir = [&](const std::string& n) {
    std::filesystem::create_directories(root.file(n));
    return root.file(n);
  };

  inputs.push_back({"a path that does not exist", root.file("missing"), root.file("missing"),
                    "no such"});
  inputs.push_back({"a directory with no segments", make_dir("empty"), root.file("empty"),
                    "no commit log segments"});
  {
    const std::string d = make_dir("only-spare");
    write_bytes(d + "/" + spare_file_name(7), segment_bytes);
    inputs.push_back({"a directory with only a spare segment", d, d,
                      "no commit log segments (files named CommitLog-<version>-<id>.log); its spare segment files"});
  }
  {
    // Opened without blocking, then refused: a plain open() would hang.
    const std::string d = make_dir("fifo");
    REQUIRE(::mkfifo((d + "/" + name).c_str(), 0644) == 0);
    inputs.push_back({"a FIFO named like a segment", d, d + "/" + name, "not a regular file"});
  }
  {
    const std::string d = make_dir("future");
    std::vector<std::byte> bytes = segment_bytes;
    store_u16(bytes.data() + format::kHeaderVersionOffset, 9);
    store_u64(bytes.data() + format::kHeaderChecksumOffset,
              checksum({bytes.data(), format::header_checksummed_bytes(format::kFormatVersion)}));
    write_bytes(d + "/" + name, bytes);
    inputs.push_back({"an unknown format version", d, d + "/" + name,
                      "offset 8: unknown segment format version 9"});
  }
  {
    // A directory named like a segment: open() succeeds, read() fails, for
    // root too (which chmod 000 would not stop).
    const std::string d = make_dir("unreadable");
    std::filesystem::create_directories(d + "/" + name);
    inputs.push_back({"an unreadable file", d, d + "/" + name, "cannot read"});
  }
  if (::geteuid() != 0) {
    const std::string d = make_dir("no-permission");
    write_bytes(d + "/" + name, segment_bytes);
    ::chmod((d + "/" + name).c_str(), 0);
    inputs.push_back({"a file without read permission", d, d + "/" + name, "Permission denied"});
  }

  for (const BadInput& input : inputs) {
    for (const char* command : {"verify", "replay", "stat", "dump"}) {
      CAPTURE(input.what);
      CAPTURE(command);
      CliResult r = run_cli({command, input.dir});
      CHECK(r.exit_code == 2);
      CHECK(r.out.empty());
      const auto err = lines(r.err);
      REQUIRE(err.size() == 1);
      CHECK(err[0].starts_with(fmt::format("commitlog {}: ", command)));
      CHECK(err[0].find(input.file) != std::string::npos);
      CHECK(err[0].find(input.message) != std::string::npos);
    }
  }

  // dump also takes files: each bad one by itself, and a bad one after a
  // good one (checked before anything is printed).
  for (const BadInput& input : inputs) {
    if (input.file == input.dir || std::filesystem::is_directory(input.file)) continue;
    CAPTURE(input.what);
    CliResult r = run_cli({"dump", segment.path, input.file});
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    REQUIRE(lines(r.err).size() == 1);
    CHECK(r.err.find(input.message) != std::string::npos);
  }
  CliResult not_dir = run_cli({"verify", segment.path});
  CHECK(not_dir.exit_code == 2);
  CHECK(not_dir.err.find("not a directory") != std::string::npos);
  // A name with a segment's prefix and suffix whose id overflows 64 bits.
  const std::string d = make_dir("bad-name");
  const std::string bad_name = d + "/CommitLog-1-18446744073709551616.log";
  write_bytes(bad_name, segment_bytes);
  for (const char* command : {"verify", "replay", "stat", "dump"}) {
    CAPTURE(command);
    CliResult r = run_cli({command, d});
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK(r.err.find(bad_name) != std::string::npos);
  }
}

TEST_CASE("tools: usage errors exit 2") {
  TempDir dir;
  write_log(dir.path(), 20);
  CHECK(run_cli({"verify", dir.path(), "--format", "yaml"}).exit_code == 2);
  CHECK(run_cli({"verify", dir.path(), "--mode", "lenient"}).exit_code == 2);
  for (const char* mode : {"tolerate-torn-tail", "absolute", "point-in-time", "skip", "strict"}) {
    CAPTURE(mode);
    CHECK(run_cli({"verify", dir.path(), "--mode", mode}).exit_code == 0);
    CHECK(run_cli({"replay", dir.path(), "--mode", mode, "--out", "/dev/null"}).exit_code == 0);
  }
  for (const char* until : {"yesterday", "2024-13-01T00:00:00Z", "2024:05:01", "-5"}) {
    CAPTURE(until);
    CliResult r = run_cli({"replay", dir.path(), "--until", until});
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK(r.err.find("--until") != std::string::npos);
  }
  CHECK(run_cli({"verify"}).exit_code == 2);
  CHECK(run_cli({"dump", dir.path(), "--format", "json"}).exit_code == 2);
  CHECK(run_cli({"stat", dir.path(), "--format", "jsonl"}).exit_code == 2);
  CHECK(run_cli({"replay", dir.path(), "--table", "x"}).exit_code == 2);
  for (const char* from : {"12", "x:1", "1:", ":5", "1:2:3"}) {
    CAPTURE(from);
    CliResult r = run_cli({"replay", dir.path(), "--from", from});
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK(r.err.find("--from") != std::string::npos);
  }
  CliResult out = run_cli({"replay", dir.path(), "--out", dir.file("no/such/dir/out.jsonl")});
  CHECK(out.exit_code == 2);
  CHECK(out.err.find("no/such/dir/out.jsonl") != std::string::npos);
}

// The acks file's rounds: an acknowledgement that two later rounds of its
// run covered was kept by the log, and losing it fails even with --allow-loss.
TEST_CASE("stress --check: a lost ack is allowed only while fewer than two later rounds of its run covered it") {
  testing::TempDir tmp;
  const std::string dir = tmp.file("log");
  REQUIRE(::mkdir(dir.c_str(), 0700) == 0);
  const auto check = [&](const std::string& acks) {
    const std::string path = tmp.file("acks");
    std::ofstream(path, std::ios::trunc) << acks;
    return run_cli({"stress", "--check", "--dir", dir, "--acks", path, "--allow-loss"});
  };
  // s 0 and 1 were acknowledged at round 1, the run went on to round 2: not yet kept.
  const auto unkept = check("run\n0 0 1\n0 1 1\n1 0 2\nrun\n0 0 0\n");
  CHECK(unkept.exit_code == 0);
  CHECK(unkept.out.find(" lost_kept=0 ") != std::string::npos);
  // Round 3 came: s 0 and 1 were kept, and lost.
  const auto kept = check("run\n0 0 1\n0 1 1\n0 2 2\n1 0 3\nrun\n0 0 0\n");
  CHECK(kept.exit_code == 1);
  CHECK(kept.out.find(" lost_kept=2 ") != std::string::npos);
  // Rounds of another run say nothing about this one's acks.
  const auto other_run = check("run\n0 0 1\nrun\n1 0 5\n");
  CHECK(other_run.exit_code == 0);
}

TEST_CASE("file modes: every file tail, replay, stress and bench create is the owner's alone whatever the umask") {
  TempDir dir, tmp;
  write_log(dir.path(), 50);
  const std::string out = tmp.file("created");
  REQUIRE(::mkdir(out.c_str(), 0700) == 0);
  Umask lax(0);
  CHECK(run_cli({"tail", dir.path(), "--position-file", out + "/tail.position", "--out", out + "/tail.jsonl"})
            .exit_code == 0);
  CHECK(run_cli({"replay", dir.path(), "--out", out + "/replay.jsonl"}).exit_code == 0);
  CHECK(run_cli({"stress", "--dir", out + "/stress", "--acks", out + "/stress.acks", "--duration", "0.05"})
            .exit_code == 0);
  CHECK(run_cli({"bench", "--dir", out + "/bench", "--engines", "commitlog", "--policies", "batch", "--producers",
                 "1", "--duration", "0.05s", "--warmup", "0.01s", "--format", "csv", "--out", out + "/bench.csv"})
            .exit_code == 0);
  for (const char* file : {"tail.position", "tail.jsonl", "replay.jsonl", "stress.acks", "bench.csv"}) {
    CHECK_MESSAGE(std::filesystem::exists(out + "/" + file), file);
  }
  CHECK(check_modes_under(out, 0600, 0700) >= 6);  // and stress's segments
}

}  // namespace commitlog::testing
