// SPDX-License-Identifier: Apache-2.0
// The corruption matrix: each kind of damage, to a plain, an LZ4, an
// encrypted LZ4 log (sections sealed with AES-256-GCM) and an encrypted plain
// one (sealed entries) written by the real writer and closed, in its newest and in a middle
// segment, replayed in each recovery mode. For each it asserts the verdict
// and exit code of `commitlog verify --mode M` and the exact set of
// mutations the library's replay delivers, against what the damage costs:
//  - corruption: tolerate-torn-tail, absolute and point-in-time deliver
//    everything before the damage and exit 1; skip delivers everything
//    but what the damage destroyed, and exits 1;
//  - a torn tail (newest segment only): everything intact is delivered and
//    verify exits 0, except in absolute mode (exit 1, nothing after it);
//  - a file that cannot be a segment (a FIFO): an input error, exit 2.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "commitlog/commit_log.h"
#include "commitlog/replayer.h"
#include "segment/checksum.h"
#include "segment/codec.h"
#include "segment/format.h"
#include "segment/segment_reader.h"
#include "tests/support/log_files.h"
#include "tests/support/run_cli.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_keys.h"

namespace commitlog {
namespace {

namespace fs = std::filesystem;
using testing::read_file;
using testing::TempDir;
using testing::write_file;

struct WrittenEntry {
  Position position;
  std::string payload;
};

// A flush's sync section: where it starts (its marker, in the image of a
// compressed segment), its bytes in a compressed file, and its entries.
struct MatrixSection {
  uint64_t marker = 0;
  uint64_t stored_at = 0, stored_end = 0;  // compressed only
  std::vector<size_t> entries;             // indexes into Log::written
};

struct Segment {
  SegmentFile file;
  std::vector<size_t> entries;
  std::vector<MatrixSection> sections;
  uint64_t data_end = 0;  // the end marker's offset (plain) or the file end of the last section
};

struct Log {
  TempDir dir;
  bool compressed = false;  // written in LZ4 sections
  bool encrypted = false;   // sealed sections when compressed, else sealed entries
  TempDir key_dir;
  std::shared_ptr<const KeyProvider> keys;
  std::vector<WrittenEntry> written;
  std::vector<Segment> segments;
};

// Batches of 4 (one sync section each under batch) in 16 KiB segments,
// closed once at least four segments hold data and the newest holds ten.
void write_log(Log& log) {
  Options options;
  options.directory = log.dir.path();
  options.sync_policy = "batch";
  options.segment_size = 16 << 10;
  options.compression = log.compressed ? Compression::kLz4 : Compression::kNone;
  if (log.encrypted) log.keys = testing::test_keys(log.key_dir.file("keys"), {1});
  options.encryption = log.keys;
  auto cl = CommitLog::open(options);
  REQUIRE(cl.ok());
  std::set<uint64_t> segments;
  int in_newest = 0;
  for (int b = 0; segments.size() < 4 || in_newest < 10; ++b) {
    REQUIRE(b < 400);
    std::vector<std::string> payloads;
    std::vector<Mutation> batch;
    for (int i = 0; i < 4; ++i) {
      const int n = b * 4 + i;
      payloads.push_back(fmt::format("mutation {} of batch {} ", n, b) + std::string(40 + n * 37 % 300, 'a' + n % 26));
    }
    for (const auto& p : payloads) batch.push_back({1, std::as_bytes(std::span(p))});
    auto range = (*cl)->append_batch(batch);
    REQUIRE(range.ok());
    in_newest = segments.insert(range->last.segment).second ? 1 : in_newest + 1;
  }
  REQUIRE((*cl)->close().ok());
}

// What the intact log holds, segment by segment and section by section.
void map_log(Log& log) {
  std::map<Position, size_t> index;
  ReplayOptions with_keys;
  with_keys.keys = log.keys;
  auto report = replay_directory(log.dir.path(), with_keys, [&](const ReplayedMutation& m) {
    index[m.position] = log.written.size();
    log.written.push_back({m.position, std::string(reinterpret_cast<const char*>(m.payload.data()), m.payload.size())});
    return Status{};
  });
  REQUIRE(report.intact());
  for (const SegmentFile& f : testing::segment_files(log.dir.path())) {
    Segment s{f};
    const auto bytes = read_file(f.path);
    SegmentHeader header;
    REQUIRE(decode_segment_header(bytes, &header) == HeaderProblem::kNone);
    if (log.compressed) {
      for (uint64_t at = format::first_section_offset(header.flags);;) {
        auto h = decode_section_header(bytes.data() + at, f.id, at, header.flags, header.capacity);
        if (!h) break;
        const uint64_t end = format::align_up(at + format::kSectionHeaderSize + h->stored_length);
        s.sections.push_back({h->image_offset, at, end, {}});
        s.data_end = at = end;
      }
    }
    const SegmentImage image = load_segment_image(bytes, header, log.keys.get());
    SegmentReader reader(image, header);
    for (SegmentItem item = reader.next(); !std::holds_alternative<SegmentEnd>(item); item = reader.next()) {
      const auto& e = std::get<SegmentEntry>(item);
      const size_t i = index.at({f.id, e.offset});
      s.entries.push_back(i);
      if (log.compressed) {
        auto it = std::find_if(s.sections.rbegin(), s.sections.rend(), [&](const MatrixSection& c) { return c.marker < e.offset; });
        REQUIRE(it != s.sections.rend());
        it->entries.push_back(i);
      } else {
        if (s.sections.empty() || s.sections.back().marker != reader.section().marker) {
          s.sections.push_back({reader.section().marker, 0, 0, {}});
        }
        s.sections.back().entries.push_back(i);
      }
    }
    if (!log.compressed) {  // the end marker's offset
      SegmentReader again(image, header);
      SegmentItem item = again.next();
      while (!std::holds_alternative<SegmentEnd>(item)) item = again.next();
      s.data_end = std::get<SegmentEnd>(item).offset;
    }
    log.segments.push_back(std::move(s));
  }
  REQUIRE(log.segments.size() >= 4);
}

// What a damage must cost.
enum class Verdict { kTornTail, kCorrupt, kInputError };
struct Expect {
  Verdict verdict = Verdict::kCorrupt;
  Position first;        // where replay meets the damage: modes that stop deliver what lies before
  std::set<size_t> lost;  // what even skip mode cannot deliver
};

std::set<size_t> all_of(const Segment& s) { return {s.entries.begin(), s.entries.end()}; }

// Plain segments: what zeroing [from, to) destroys. A section whose marker is
// hit is lost whole; in another, an entry whose header is hit takes the rest
// of its section with it, one whose payload is hit only itself.
Expect zeroed_plain(const Log& log, const Segment& s, uint64_t from, uint64_t to) {
  Expect e{Verdict::kCorrupt, {s.file.id, UINT64_MAX}, {}};
  auto hit = [&](uint64_t a, uint64_t b) { return a < to && from < b; };
  for (const MatrixSection& c : s.sections) {
    if (hit(c.marker, c.marker + format::kMarkerSize)) {
      e.first.offset = std::min(e.first.offset, c.marker);
      e.lost.insert(c.entries.begin(), c.entries.end());
      continue;
    }
    bool rest = false;
    for (size_t i : c.entries) {
      const uint64_t at = log.written[i].position.offset;
      const uint64_t stored = log.written[i].payload.size() + (log.encrypted ? format::kSectionTagSize : 0);
      rest = rest || hit(at, at + format::kEntryHeaderSize);
      if (rest || hit(at + format::kEntryHeaderSize, at + format::kEntryHeaderSize + stored)) {
        e.first.offset = std::min(e.first.offset, at);
        e.lost.insert(i);
      }
    }
  }
  REQUIRE(!e.lost.empty());
  return e;
}

// Compressed segments: every stored section the range touches loses its flush.
Expect zeroed_compressed(const Segment& s, uint64_t from, uint64_t to) {
  Expect e{Verdict::kCorrupt, {s.file.id, UINT64_MAX}, {}};
  for (const MatrixSection& c : s.sections) {
    if (c.stored_at < to && from < c.stored_end) {
      e.first.offset = std::min(e.first.offset, c.marker);
      e.lost.insert(c.entries.begin(), c.entries.end());
    }
  }
  REQUIRE(!e.lost.empty());
  return e;
}

void edit(const std::string& path, const std::function<void(std::vector<std::byte>&)>& change) {
  auto bytes = read_file(path);
  change(bytes);
  write_file(path, bytes);
}

std::string path_for(const Log& log, uint64_t id) { return log.dir.file(fmt::format("CommitLog-1-{}.log", id)); }

// A section in the middle of segment `s`, with a few after it.
const MatrixSection& middle_section(const Segment& s) {
  REQUIRE(s.sections.size() >= 8);
  return s.sections[s.sections.size() / 2 - 1];
}

using Damage = std::function<Expect(Log&, size_t segment)>;
struct Case {
  const char* name;
  bool plain, compressed;
  Damage damage;
  bool encrypted = compressed;  // encrypted LZ4 logs are written in sections too
  bool sealed = plain;          // encrypted plain logs seal entries in the plain layout
};

std::vector<Case> cases() {
  auto seg = [](Log& log, size_t i) -> Segment& { return log.segments[i]; };
  return {
      {"a bit of the header", true, true,
       [&](Log& log, size_t i) {
         testing::flip_bit(seg(log, i).file.path, format::kHeaderCreatedOffset + 2);
         return Expect{Verdict::kCorrupt, {seg(log, i).file.id, 0}, all_of(seg(log, i))};
       }},
      {"a bit of the magic", true, true,
       [&](Log& log, size_t i) {
         testing::flip_bit(seg(log, i).file.path, format::kHeaderMagicOffset + 5, 3);
         return Expect{Verdict::kCorrupt, {seg(log, i).file.id, 0}, all_of(seg(log, i))};
       }},
      {"a bit of a sync marker", true, false,
       [&](Log& log, size_t i) {
         const MatrixSection& c = middle_section(seg(log, i));
         testing::flip_bit(seg(log, i).file.path, c.marker + 11, 6);
         return Expect{Verdict::kCorrupt, {seg(log, i).file.id, c.marker}, {c.entries.begin(), c.entries.end()}};
       }},
      {"a bit of an entry header", true, false,
       [&](Log& log, size_t i) {
         const MatrixSection& c = middle_section(seg(log, i));
         const Position at = log.written[c.entries[1]].position;
         testing::flip_bit(seg(log, i).file.path, at.offset + format::kEntryTimeOffset);
         return Expect{Verdict::kCorrupt, at, {c.entries.begin() + 1, c.entries.end()}};
       }},
      {"a bit of a payload", true, false,
       [&](Log& log, size_t i) {
         const size_t victim = middle_section(seg(log, i)).entries[2];
         const Position at = log.written[victim].position;
         testing::flip_bit(seg(log, i).file.path, at.offset + format::kEntryHeaderSize + 9);
         return Expect{Verdict::kCorrupt, at, {victim}};
       }},
      {"a zeroed sector at a marker", true, false,
       [&](Log& log, size_t i) {
         const uint64_t from = middle_section(seg(log, i)).marker;
         edit(seg(log, i).file.path, [&](auto& b) { std::fill_n(b.begin() + static_cast<ptrdiff_t>(from), 512, std::byte{0}); });
         return zeroed_plain(log, seg(log, i), from, from + 512);
       }},
      {"a zeroed sector between markers", true, false,
       [&](Log& log, size_t i) {
         const uint64_t from = log.written[middle_section(seg(log, i)).entries[1]].position.offset + 40;
         edit(seg(log, i).file.path, [&](auto& b) { std::fill_n(b.begin() + static_cast<ptrdiff_t>(from), 512, std::byte{0}); });
         return zeroed_plain(log, seg(log, i), from, from + 512);
       }},
      {"a bit of a section header", false, true,
       [&](Log& log, size_t i) {
         const MatrixSection& c = middle_section(seg(log, i));
         testing::flip_bit(seg(log, i).file.path, c.stored_at + format::kSectionImageLength + 1);
         return zeroed_compressed(seg(log, i), c.stored_at, c.stored_at + 1);
       }},
      {"a bit of the stored bytes", false, true,
       [&](Log& log, size_t i) {
         const MatrixSection& c = middle_section(seg(log, i));
         testing::flip_bit(seg(log, i).file.path, c.stored_at + format::kSectionHeaderSize + 7, 4);
         return zeroed_compressed(seg(log, i), c.stored_at + format::kSectionHeaderSize + 7,
                                  c.stored_at + format::kSectionHeaderSize + 8);
       }},
      {"a bit of a section's tag", false, false,
       [&](Log& log, size_t i) {
         const MatrixSection& c = middle_section(seg(log, i));
         const uint64_t tag_end = c.stored_at + format::kSectionHeaderSize +
                                  load_u32(read_file(seg(log, i).file.path).data() + c.stored_at +
                                           format::kSectionStoredLength);
         testing::flip_bit(seg(log, i).file.path, tag_end - 3, 5);
         return zeroed_compressed(seg(log, i), tag_end - 3, tag_end - 2);
       },
       true, false},
      {"a bit of an entry's tag", false, false,
       [&](Log& log, size_t i) {
         const size_t victim = middle_section(seg(log, i)).entries[2];
         const Position at = log.written[victim].position;
         testing::flip_bit(seg(log, i).file.path,
                           at.offset + format::kEntryHeaderSize + log.written[victim].payload.size() + 3, 1);
         return Expect{Verdict::kCorrupt, at, {victim}};
       },
       false, true},
      {"a bit of the wrapped data key", false, false,
       [&](Log& log, size_t i) {
         testing::flip_bit(seg(log, i).file.path, format::kKeyBlockOffset + format::kKeyBlockWrappedOffset + 20, 2);
         return Expect{Verdict::kCorrupt, {seg(log, i).file.id, format::kFirstMarkerOffset}, all_of(seg(log, i))};
       },
       true, true},
      {"a zeroed section header", false, true,
       [&](Log& log, size_t i) {
         const MatrixSection& c = middle_section(seg(log, i));
         edit(seg(log, i).file.path,
              [&](auto& b) { std::fill_n(b.begin() + static_cast<ptrdiff_t>(c.stored_at), format::kSectionHeaderSize, std::byte{0}); });
         return zeroed_compressed(seg(log, i), c.stored_at, c.stored_at + 1);
       }},
      {"a zeroed sector of sections", false, true,
       [&](Log& log, size_t i) {
         const uint64_t from = middle_section(seg(log, i)).stored_at + 24;
         edit(seg(log, i).file.path, [&](auto& b) { std::fill_n(b.begin() + static_cast<ptrdiff_t>(from), 512, std::byte{0}); });
         return zeroed_compressed(seg(log, i), from, from + 512);
       }},
      {"a cut inside the data", true, true,
       [&](Log& log, size_t i) {
         Segment& s = seg(log, i);
         const MatrixSection& c = middle_section(s);
         const uint64_t cut = log.compressed ? c.stored_at + 50 : log.written[c.entries[1]].position.offset + 50;
         edit(s.file.path, [&](auto& b) { b.resize(cut); });
         Expect e{Verdict::kCorrupt, log.compressed ? Position{s.file.id, c.marker} : log.written[c.entries[1]].position, {}};
         for (size_t k : s.entries) {
           if (!(log.written[k].position < e.first)) e.lost.insert(k);
         }
         return e;
       }},
      {"a cut after the data", true, true,
       [&](Log& log, size_t i) {
         Segment& s = seg(log, i);
         const uint64_t size = fs::file_size(s.file.path), after = s.data_end + format::kMarkerSize;
         const uint64_t cut = (after + size) / 2;
         REQUIRE(after < cut);
         edit(s.file.path, [&](auto& b) { b.resize(cut); });
         return Expect{Verdict::kCorrupt, {s.file.id, log.compressed ? UINT64_MAX - 1 : cut}, {}};
       }},
      {"garbage after the data", true, true,
       [&](Log& log, size_t i) {
         Segment& s = seg(log, i);
         edit(s.file.path, [&](auto& b) {
           REQUIRE(s.data_end + format::kMarkerSize <= b.size());
           std::fill(b.begin() + static_cast<ptrdiff_t>(s.data_end), b.begin() + static_cast<ptrdiff_t>(std::min<uint64_t>(b.size(), s.data_end + 200)), std::byte{0xab});
         });
         // Over a closed plain segment's end marker it is below the seal;
         // after a compressed one's last section, past the sealed image.
         const bool newest = i + 1 == log.segments.size();
         return Expect{newest && log.compressed ? Verdict::kTornTail : Verdict::kCorrupt,
                       {s.file.id, log.compressed ? UINT64_MAX - 1 : s.data_end}, {}};
       }},
      {"a duplicated segment", true, true,
       [&](Log& log, size_t i) {
         if (i + 1 == log.segments.size()) {  // a copy of a middle one, as the newest
           const uint64_t id = log.segments.back().file.id + 1;
           fs::copy_file(log.segments[1].file.path, path_for(log, id));
           return Expect{Verdict::kCorrupt, {id, 0}, {}};
         }
         fs::copy_file(log.segments[i - 1].file.path, seg(log, i).file.path, fs::copy_options::overwrite_existing);
         return Expect{Verdict::kCorrupt, {seg(log, i).file.id, 0}, all_of(seg(log, i))};
       }},
      {"two swapped segments", true, true,
       [&](Log& log, size_t i) {
         const Segment &a = seg(log, i - 1), &b = seg(log, i);
         const auto bytes_a = read_file(a.file.path);
         write_file(a.file.path, read_file(b.file.path));
         write_file(b.file.path, bytes_a);
         Expect e{Verdict::kCorrupt, {a.file.id, 0}, all_of(a)};
         e.lost.insert(b.entries.begin(), b.entries.end());
         return e;
       }},
      {"a FIFO named like a segment", true, true,
       [&](Log& log, size_t i) {
         const bool newest = i + 1 == log.segments.size();
         const std::string path = newest ? path_for(log, seg(log, i).file.id + 1) : seg(log, i).file.path;
         if (!newest) fs::remove(path);
         REQUIRE(::mkfifo(path.c_str(), 0644) == 0);
         return Expect{Verdict::kInputError, {}, {}};
       }},
  };
}

constexpr RecoveryMode kModes[] = {RecoveryMode::kTolerateTornTail, RecoveryMode::kAbsolute,
                                   RecoveryMode::kPointInTime, RecoveryMode::kSkip};

// What `mode` must deliver and how verify must exit, given the damage's cost.
std::pair<std::set<size_t>, int> expected(const Log& log, const Expect& e, RecoveryMode mode) {
  std::set<size_t> out;
  if (e.verdict == Verdict::kInputError) return {out, 2};
  const bool stops = mode != RecoveryMode::kSkip && (e.verdict == Verdict::kCorrupt || mode == RecoveryMode::kAbsolute);
  for (size_t i = 0; i < log.written.size(); ++i) {
    if (stops ? log.written[i].position < e.first : !e.lost.contains(i)) out.insert(i);
  }
  const bool refused = e.verdict == Verdict::kCorrupt || mode == RecoveryMode::kAbsolute;
  return {out, refused ? 1 : 0};
}

void run_case(bool compressed, bool encrypted, const Case& c, bool newest) {
  Log log;
  log.compressed = compressed;
  log.encrypted = encrypted;
  write_log(log);
  map_log(log);
  const size_t segment = newest ? log.segments.size() - 1 : 1;
  const Expect e = c.damage(log, segment);
  for (RecoveryMode mode : kModes) {
    const std::string mode_name = recovery_mode_name(mode);
    CAPTURE(mode_name);
    const auto [want, exit_code] = expected(log, e, mode);
    ReplayOptions options;
    options.mode = mode;
    options.keys = log.keys;
    std::set<size_t> got;
    std::map<Position, size_t> index;
    for (size_t i = 0; i < log.written.size(); ++i) index[log.written[i].position] = i;
    const ReplayReport report = replay_directory(log.dir.path(), options, [&](const ReplayedMutation& m) {
      auto it = index.find(m.position);
      REQUIRE_MESSAGE(it != index.end(), "delivered a mutation never written, at " << m.position.to_string());
      CHECK(std::string(reinterpret_cast<const char*>(m.payload.data()), m.payload.size()) ==
            log.written[it->second].payload);
      got.insert(it->second);
      return Status{};
    });
    CHECK(got == want);
    CHECK(report.intact() == (exit_code == 0));
    std::vector<std::string> args = {"verify", log.dir.path(), "--mode", mode_name, "--format", "json"};
    if (encrypted) args.insert(args.end(), {"--key-file", log.key_dir.file("keys")});
    const testing::CliResult verify = testing::run_cli(COMMITLOG_CLI, args);
    CHECK(verify.exit_code == exit_code);
    if (exit_code == 2) continue;
    const auto j = nlohmann::json::parse(verify.out);
    CHECK(j["verdict"] == (e.verdict == Verdict::kTornTail ? "torn tail" : "corrupt"));
  }
}

TEST_CASE("corruption matrix: every damage x plain, LZ4, encrypted LZ4 and encrypted x newest and middle segment x every recovery mode") {
  enum Kind { kPlain, kLz4, kEncryptedLz4, kEncrypted };
  constexpr const char* kNames[] = {"plain", "LZ4", "encrypted LZ4", "encrypted"};
  for (const Case& c : cases()) {
    for (Kind kind : {kPlain, kLz4, kEncryptedLz4, kEncrypted}) {
      const bool applies[] = {c.plain, c.compressed, c.encrypted, c.sealed};
      if (!applies[kind]) continue;
      for (bool newest : {true, false}) {
        const std::string damage = c.name;
        const std::string log_kind = kNames[kind];
        CAPTURE(damage);
        CAPTURE(log_kind);
        CAPTURE(newest);
        run_case(kind == kLz4 || kind == kEncryptedLz4, kind == kEncryptedLz4 || kind == kEncrypted, c, newest);
      }
    }
  }
}

}  // namespace
}  // namespace commitlog
