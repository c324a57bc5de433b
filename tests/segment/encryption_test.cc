// SPDX-License-Identifier: Apache-2.0
// Encrypted segments: key files, round trips in sealed entries and LZ4
// sections in every access mode that writes them, no plaintext on disk,
// missing and wrong keys, rotation, and damage to ciphertext, tags and the
// key block.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <set>

#include <fmt/core.h>

#include "commitlog/commit_log.h"
#include "commitlog/tail_reader.h"
#include "segment/checksum.h"
#include "segment/codec.h"
#include "segment/crypto/cipher.h"
#include "segment/format.h"
#include "tests/support/log_files.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_keys.h"

namespace commitlog {
namespace {

using testing::flip_bit;
using testing::read_file;
using testing::replay_with;
using testing::segment_files;
using testing::TempDir;
using testing::test_keys;
using testing::write_file;
using testing::write_key_file;

constexpr std::string_view kPattern = "SECRET-PAYLOAD-PATTERN";

std::string payload(int i) { return fmt::format("{}:{:06d}:{}", kPattern, i, std::string(40 + i % 50, 'x')); }

Options encrypted_options(const std::string& dir, std::shared_ptr<const KeyProvider> keys,
                          Compression compression = Compression::kNone) {
  Options o;
  o.directory = dir;
  o.sync_policy = "batch";
  o.segment_size = 16 << 10;
  o.compression = compression;
  o.disk_access_mode = DiskAccessMode::kStandard;
  o.encryption = std::move(keys);
  return o;
}

std::vector<std::string> write_log(const Options& options, int count) {
  std::vector<std::string> written;
  auto log = testing::open_log(options);
  for (int i = 0; i < count; ++i) {
    written.push_back(payload(i));
    REQUIRE(log->append(static_cast<uint32_t>(i % 3), written.back()).ok());
  }
  REQUIRE(log->close().ok());
  return written;
}

ReplayOptions with_keys(std::shared_ptr<const KeyProvider> keys, RecoveryMode mode = RecoveryMode::kTolerateTornTail) {
  ReplayOptions o;
  o.keys = std::move(keys);
  o.mode = mode;
  return o;
}

bool holds(const std::vector<std::byte>& bytes, std::string_view text) {
  const auto* b = reinterpret_cast<const char*>(bytes.data());
  return std::search(b, b + bytes.size(), text.begin(), text.end()) != b + bytes.size();
}

TEST_CASE("a key file gives its keys by id and the highest is active unless one is named") {
  TempDir dir;
  const std::string path = write_key_file(dir.path() + "/keys", {3, 7, 5});
  auto keys = load_key_file(path);
  REQUIRE(keys.ok());
  CHECK((*keys)->active_key_id() == 7);
  CHECK((*keys)->key_ids() == std::vector<uint32_t>{3, 5, 7});
  CHECK((*keys)->key(5).ok());
  CHECK((*keys)->key(4).status().code() == ErrorCode::kNotFound);
  auto named = load_key_file(path, 3);
  REQUIRE(named.ok());
  CHECK((*named)->active_key_id() == 3);
  auto absent = load_key_file(path, 4);
  CHECK_MESSAGE(absent.status().message().find("no key 4") != std::string::npos, absent.status().message());
}

TEST_CASE("a key file others may read, or with a malformed line, is refused, naming it") {
  TempDir dir;
  const std::string path = write_key_file(dir.path() + "/keys", {1});
  std::filesystem::permissions(path, std::filesystem::perms::group_read, std::filesystem::perm_options::add);
  auto open_to_group = load_key_file(path);
  REQUIRE(!open_to_group.ok());
  CHECK_MESSAGE(open_to_group.status().message().find(path + " has mode 0640") != std::string::npos,
                open_to_group.status().message());
  testing::write_text(path, "1 00112233\n");
  std::filesystem::permissions(path, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write,
                               std::filesystem::perm_options::replace);
  auto short_key = load_key_file(path);
  CHECK_MESSAGE(short_key.status().message().find("line 1: the key is not 64 hex digits") != std::string::npos,
                short_key.status().message());
  testing::write_text(path, "# nothing\n");
  CHECK(load_key_file(path).status().message().find("holds no key") != std::string::npos);
}

TEST_CASE("a wrapped key unwraps only under its master key, and a sealed section opens only in its place") {
  const crypto::Key kek = *crypto::random_key(), other = *crypto::random_key(), data = *crypto::random_key();
  const auto wrapped = crypto::wrap_key(kek, data);
  REQUIRE(wrapped);
  CHECK(crypto::unwrap_key(kek, *wrapped) == data);
  CHECK(!crypto::unwrap_key(other, *wrapped));
  crypto::Gcm gcm(data);
  std::vector<std::byte> bytes(100, std::byte{7});
  std::byte tag[crypto::kTagSize];
  const auto nonce = section_nonce(42, 1);
  std::byte header[format::kSectionHeaderSize] = {};
  REQUIRE(gcm.seal(nonce, section_aad(header, 42, 128), bytes, tag));
  CHECK(bytes != std::vector<std::byte>(100, std::byte{7}));
  std::vector<std::byte> out(100);
  CHECK(gcm.open(nonce, section_aad(header, 42, 128), bytes, out.data(), tag));
  CHECK(out == std::vector<std::byte>(100, std::byte{7}));
  CHECK(!gcm.open(nonce, section_aad(header, 42, 136), bytes, out.data(), tag));  // moved
  CHECK(!gcm.open(section_nonce(42, 2), section_aad(header, 42, 128), bytes, out.data(), tag));
}

TEST_CASE("encrypted logs replay what was written, with and without LZ4, and hold no plaintext") {
  for (Compression compression : {Compression::kNone, Compression::kLz4}) {
    for (DiskAccessMode mode : {DiskAccessMode::kStandard, DiskAccessMode::kDirect, DiskAccessMode::kMmap}) {
      if (mode == DiskAccessMode::kMmap && compression != Compression::kNone) continue;
      TempDir dir;
      Options options = encrypted_options(dir.path() + "/log", test_keys(dir.path() + "/keys", {1}), compression);
      options.disk_access_mode = mode;
      if (mode == DiskAccessMode::kDirect && !posix_file_system()->direct_io_block_size(dir.path()).ok()) continue;
      CAPTURE(static_cast<int>(compression));
      CAPTURE(static_cast<int>(mode));
      const auto written = write_log(options, 600);
      REQUIRE(segment_files(options.directory).size() >= 3);
      for (const auto& f : segment_files(options.directory)) {
        const auto bytes = read_file(f.path);
        CHECK_FALSE(holds(bytes, kPattern));
        SegmentHeader header;
        REQUIRE(decode_segment_header(bytes, &header) == HeaderProblem::kNone);
        CHECK((header.flags & format::kFlagEncrypted) != 0);
      }
      auto replayed = replay_with(options.directory, with_keys(options.encryption));
      REQUIRE_MESSAGE(replayed.report.status.ok(), replayed.report.status.message());
      CHECK(replayed.payloads == written);
    }
  }
}

TEST_CASE("a lone producer writes a sealed payload of several pieces itself, as it seals it, and it replays") {
  for (DiskAccessMode mode : {DiskAccessMode::kStandard, DiskAccessMode::kDirect}) {
    CAPTURE(static_cast<int>(mode));
    TempDir dir;
    Options options = encrypted_options(dir.path() + "/log", test_keys(dir.path() + "/keys", {1}));
    options.disk_access_mode = mode;
    if (mode == DiskAccessMode::kDirect && !posix_file_system()->direct_io_block_size(dir.path()).ok()) continue;
    options.segment_size = 16 << 20;
    options.direct_write_threshold = 64 << 10;
    std::vector<std::string> written;
    auto log = testing::open_log(options);
    for (int i = 0; i < 3; ++i) {
      written.push_back("");
      while (written.back().size() < (5u << 20) / 2) written.back() += payload(i);
      REQUIRE(log->append(1, written.back()).ok());
    }
    // One producer, no flush running while it writes: each payload went
    // direct for the overlap of its sealing with the device's writes.
    CHECK(log->metrics().direct_writes == 3);
    // One piece has nothing to overlap: with direct I/O the flush writes it.
    written.push_back(std::string(256 << 10, 's'));
    REQUIRE(log->append(1, written.back()).ok());
    CHECK(log->metrics().direct_writes == (mode == DiskAccessMode::kDirect ? 3 : 4));
    REQUIRE(log->close().ok());
    for (const auto& f : segment_files(options.directory)) CHECK_FALSE(holds(read_file(f.path), kPattern));
    auto replayed = replay_with(options.directory, with_keys(options.encryption));
    REQUIRE_MESSAGE(replayed.report.status.ok(), replayed.report.status.message());
    CHECK(replayed.payloads == written);
  }
}

TEST_CASE("an encrypted plain log recycles its discarded segments, and no spare holds plaintext") {
  TempDir dir;
  Options options = encrypted_options(dir.path() + "/log", test_keys(dir.path() + "/keys", {1}));
  std::vector<std::string> written;
  {
    auto log = testing::open_log(options);
    for (int i = 0; i < 900; ++i) {
      written.push_back(payload(i));
      auto at = log->append(1, written.back());
      REQUIRE(at.ok());
      if (i == 700) REQUIRE(log->discard(1, *at).ok());
    }
    CHECK(log->metrics().segments_recycled > 0);
    REQUIRE(log->close().ok());
  }
  size_t spares = 0;
  for (const auto& entry : std::filesystem::directory_iterator(options.directory)) {
    spares += entry.path().extension() == ".spare" ? 1 : 0;
    CHECK_FALSE_MESSAGE(holds(read_file(entry.path().string()), kPattern), entry.path().string());
  }
  CHECK(spares > 0);
  auto replayed = replay_with(options.directory, with_keys(options.encryption));
  REQUIRE_MESSAGE(replayed.report.status.ok(), replayed.report.status.message());
  // What the discard left: the segments from the one holding entry 700 on.
  REQUIRE(replayed.payloads.size() >= 200);
  REQUIRE(replayed.payloads.size() < 700);
  CHECK(replayed.payloads == std::vector<std::string>(written.end() - static_cast<ptrdiff_t>(replayed.payloads.size()),
                                                      written.end()));
}

TEST_CASE("a plain log's spares are not reused once it encrypts: none of their plaintext outlives the first segment") {
  TempDir dir;
  Options options = encrypted_options(dir.path() + "/log", nullptr);
  const auto spare_count = [&] {
    size_t n = 0;
    for (const auto& entry : std::filesystem::directory_iterator(options.directory)) {
      n += entry.path().extension() == ".spare" ? 1 : 0;
    }
    return n;
  };
  {
    auto log = testing::open_log(options);
    Position last;
    for (int i = 0; i < 700; ++i) {
      auto at = log->append(1, payload(i));
      REQUIRE(at.ok());
      last = *at;
    }
    REQUIRE(log->discard(1, last).ok());
    REQUIRE(log->close().ok());
  }
  REQUIRE(spare_count() > 1);  // a pool of them, with plaintext in place
  for (const auto& f : segment_files(options.directory)) std::filesystem::remove(f.path);

  options.encryption = test_keys(dir.path() + "/keys", {1});
  const auto written = write_log(options, 100);
  for (const auto& entry : std::filesystem::directory_iterator(options.directory)) {
    CHECK_FALSE_MESSAGE(holds(read_file(entry.path().string()), kPattern), entry.path().string());
  }
  auto replayed = replay_with(options.directory, with_keys(options.encryption));
  REQUIRE_MESSAGE(replayed.report.status.ok(), replayed.report.status.message());
  CHECK(replayed.payloads == written);
}

TEST_CASE("an encrypted log with CDC leaves no plaintext in the log, cdc_raw or its index files") {
  for (Compression compression : {Compression::kNone, Compression::kLz4}) {
    CAPTURE(static_cast<int>(compression));
    TempDir dir;
    Options options = encrypted_options(dir.path() + "/log", test_keys(dir.path() + "/keys", {1}), compression);
    options.cdc.enabled = true;
    options.cdc.raw_directory = dir.path() + "/cdc_raw";
    write_log(options, 400);
    int files = 0;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(dir.path())) {
      if (!entry.is_regular_file() || entry.path().filename() == "keys") continue;
      ++files;
      CHECK_FALSE_MESSAGE(holds(read_file(entry.path().string()), kPattern), entry.path().string());
    }
    CHECK(files > 4);
    CHECK(!std::filesystem::is_empty(options.cdc.raw_directory));
  }
}

TEST_CASE("the tail reads an encrypted log and its cdc_raw with the keys, and names the key id without them") {
  TempDir dir;
  Options options = encrypted_options(dir.path() + "/log", test_keys(dir.path() + "/keys", {6}));
  options.cdc.enabled = true;
  options.cdc.raw_directory = dir.path() + "/cdc_raw";
  const auto written = write_log(options, 300);
  for (const std::string& where : {options.directory, options.cdc.raw_directory}) {
    CAPTURE(where);
    TailOptions with;
    with.keys = options.encryption;
    TailReader tail(where, with);
    std::vector<std::string> seen;
    auto polled = tail.poll([&](const ReplayedMutation& m) {
      seen.emplace_back(reinterpret_cast<const char*>(m.payload.data()), m.payload.size());
      return Status{};
    });
    REQUIRE_MESSAGE(polled.ok(), polled.status().message());
    CHECK(seen == written);
    TailReader keyless(where, TailOptions{});
    auto refused = keyless.poll([](const ReplayedMutation&) { return Status{}; });
    REQUIRE(!refused.ok());
    CHECK_MESSAGE(refused.status().message().find("master key 6") != std::string::npos, refused.status().message());
  }
}

TEST_CASE("every section of an encrypted segment has a nonce of its own") {
  TempDir dir;
  Options options = encrypted_options(dir.path() + "/log", test_keys(dir.path() + "/keys", {1}), Compression::kLz4);
  write_log(options, 300);
  for (const auto& f : segment_files(options.directory)) {
    const auto bytes = read_file(f.path);
    std::set<uint32_t> counters;
    uint64_t at = format::first_section_offset(format::kFlagEncrypted), sections = 0;
    while (at + format::kSectionHeaderSize <= bytes.size()) {
      auto s = decode_section_header(bytes.data() + at, f.id, at, format::kFlagEncrypted | format::kFlagLz4Sections,
                                     options.segment_size);
      if (!s) break;
      ++sections;
      CHECK(counters.insert(s->counter).second);
      at += format::align_up(format::kSectionHeaderSize + s->stored_length);
    }
    CHECK(sections > 1);
  }
}

TEST_CASE("without keys a replay names the segment and key id, and verify's framing-only pass goes on") {
  for (Compression compression : {Compression::kNone, Compression::kLz4}) {
    CAPTURE(static_cast<int>(compression));
    TempDir dir;
    Options options = encrypted_options(dir.path() + "/log", test_keys(dir.path() + "/keys", {9}), compression);
    write_log(options, 200);
    auto none = replay_with(options.directory, ReplayOptions{});
    CHECK(none.payloads.empty());
    CHECK(none.report.status.code() == ErrorCode::kInvalidArgument);
    CHECK_MESSAGE(none.report.status.message().find("encrypted with master key 9") != std::string::npos,
                  none.report.status.message());
    ReplayOptions framing;
    framing.framing_only = true;
    framing.mode = RecoveryMode::kSkip;
    auto checked = replay_with(options.directory, framing);
    CHECK(checked.report.status.ok());
    CHECK(checked.report.corruptions == 0);
    CHECK(checked.payloads.empty());
    CHECK(checked.report.unopened.size() == segment_files(options.directory).size());
    // Damage to the framing is still found without the key: in the first
    // section's stored bytes, or the first entry's.
    flip_bit(segment_files(options.directory).front().path, format::kHeaderSize + format::kKeyBlockSize + 60);
    CHECK(replay_with(options.directory, framing).report.corruptions == 1);
  }
}

TEST_CASE("a wrong key or a missing key id is an error naming the segment and the key id") {
  TempDir dir;
  Options options = encrypted_options(dir.path() + "/log", test_keys(dir.path() + "/keys", {4}));
  write_log(options, 100);
  const std::string first = std::to_string(segment_files(options.directory).front().id);
  auto wrong = replay_with(options.directory, with_keys(test_keys(dir.path() + "/wrong", {4}, 2)));
  CHECK(wrong.payloads.empty());
  CHECK(wrong.report.status.code() == ErrorCode::kInvalidArgument);
  CHECK_MESSAGE(wrong.report.status.message().find("segment " + first + ": master key 4") != std::string::npos,
                wrong.report.status.message());
  CHECK(wrong.report.status.message().find("wrong key") != std::string::npos);
  auto missing = replay_with(options.directory, with_keys(test_keys(dir.path() + "/other", {5})));
  CHECK(missing.report.status.code() == ErrorCode::kNotFound);
  CHECK_MESSAGE(missing.report.status.message().find("segment " + first + " needs master key 4") != std::string::npos,
                missing.report.status.message());
}

TEST_CASE("after rotation new segments use the new key and old ones read while their key is kept") {
  TempDir dir;
  Options options = encrypted_options(dir.path() + "/log", test_keys(dir.path() + "/keys", {1}));
  auto written = write_log(options, 150);
  const uint64_t last_old = segment_files(options.directory).back().id;
  options.encryption = test_keys(dir.path() + "/keys", {1, 2});
  const auto more = write_log(options, 150);
  written.insert(written.end(), more.begin(), more.end());
  std::set<uint32_t> ids;
  for (const auto& f : segment_files(options.directory)) {
    const auto bytes = read_file(f.path);
    const auto block = decode_key_block(bytes.data() + format::kKeyBlockOffset, f.id);
    REQUIRE(block);
    CHECK(block->master_key_id == (f.id <= last_old ? 1u : 2u));
    ids.insert(block->master_key_id);
  }
  CHECK(ids == std::set<uint32_t>{1, 2});
  auto both = replay_with(options.directory, with_keys(options.encryption));
  REQUIRE(both.report.status.ok());
  CHECK(both.payloads == written);
  auto new_only = replay_with(options.directory, with_keys(test_keys(dir.path() + "/new", {2})));
  CHECK(new_only.report.status.message().find("needs master key 1") != std::string::npos);
}

// A closed encrypted log and the path of its oldest segment.
struct EncryptedLog {
  TempDir dir;
  Options options;
  std::vector<std::string> written;
  std::string first;
  explicit EncryptedLog(Compression compression = Compression::kNone) {
    options = encrypted_options(dir.path() + "/log", test_keys(dir.path() + "/keys", {1}), compression);
    written = write_log(options, 400);
    first = segment_files(options.directory).front().path;
  }
  void check_corruption(const std::string& kind) {
    auto strict = replay_with(options.directory, with_keys(options.encryption));
    CHECK(strict.report.status.code() == ErrorCode::kCorruption);
    CHECK_MESSAGE(strict.report.status.message().find(kind) != std::string::npos, strict.report.status.message());
    auto skip = replay_with(options.directory, with_keys(options.encryption, RecoveryMode::kSkip));
    CHECK(skip.report.corruptions > 0);
    for (const std::string& p : skip.payloads) {
      CHECK(std::find(written.begin(), written.end(), p) != written.end());  // never bad bytes
    }
  }
};

constexpr uint64_t kFirstSection = format::kHeaderSize + format::kKeyBlockSize;

TEST_CASE("damage to an encrypted segment in sections is corruption, never bad bytes") {
  SUBCASE("a flipped bit of ciphertext") {
    EncryptedLog log(Compression::kLz4);
    flip_bit(log.first, kFirstSection + format::kSectionHeaderSize + 5, 3);
    log.check_corruption("bad compressed section checksum");
  }
  SUBCASE("a flipped bit of a tag") {
    EncryptedLog log(Compression::kLz4);
    const auto bytes = read_file(log.first);
    const uint32_t stored = load_u32(bytes.data() + kFirstSection + format::kSectionStoredLength);
    flip_bit(log.first, kFirstSection + format::kSectionHeaderSize + stored - 1, 0);
    log.check_corruption("bad compressed section checksum");
  }
  SUBCASE("a flipped bit of the wrapped key") {
    EncryptedLog log(Compression::kLz4);
    flip_bit(log.first, format::kKeyBlockOffset + format::kKeyBlockWrappedOffset + 3, 1);
    log.check_corruption("bad key block");
  }
  SUBCASE("ciphertext changed with its checksums made to match fails authentication") {
    EncryptedLog log(Compression::kLz4);
    auto bytes = read_file(log.first);
    std::byte* header = bytes.data() + kFirstSection;
    const uint32_t stored = load_u32(header + format::kSectionStoredLength);
    header[format::kSectionHeaderSize + 2] ^= std::byte{0x10};
    store_u64(header + format::kSectionStoredChecksum, checksum({header + format::kSectionHeaderSize, stored}));
    store_u64(header + format::kSectionHeaderChecksum,
              section_header_checksum(header, load_u64(bytes.data() + format::kHeaderIdOffset), kFirstSection));
    write_file(log.first, bytes);
    log.check_corruption("fails authentication");
  }
  SUBCASE("a section header given another counter, its checksum made to match, fails authentication") {
    EncryptedLog log(Compression::kLz4);
    auto bytes = read_file(log.first);
    std::byte* header = bytes.data() + kFirstSection;
    store_u32(header + format::kSectionCounter, load_u32(header + format::kSectionCounter) + 1000);
    store_u64(header + format::kSectionHeaderChecksum,
              section_header_checksum(header, load_u64(bytes.data() + format::kHeaderIdOffset), kFirstSection));
    write_file(log.first, bytes);
    log.check_corruption("fails authentication");
  }
}

// Sealed entries: the first entry of the oldest segment, rewritten by `change`
// with its checksums made to match again.
void rewrite_first_entry(const std::string& path, const std::function<void(EntryHeader&, std::byte* stored)>& change) {
  auto bytes = read_file(path);
  const uint64_t id = load_u64(bytes.data() + format::kHeaderIdOffset);
  const uint64_t at = format::first_entry_offset(format::kFlagSealedEntries);
  auto header = decode_entry_header(bytes.data() + at, id, at);
  REQUIRE(header);
  std::byte* stored = bytes.data() + at + format::kEntryHeaderSize;
  change(*header, stored);
  header->payload_checksum = checksum({stored, header->payload_size()});
  encode_entry_header(bytes.data() + at, *header, id, at);
  write_file(path, bytes);
}

TEST_CASE("damage to an encrypted segment of sealed entries is corruption, never bad bytes") {
  const uint64_t first_entry = format::first_entry_offset(format::kFlagSealedEntries);
  SUBCASE("the layout: a key block, then entries whose stored payload carries a tag") {
    EncryptedLog log;
    const auto bytes = read_file(log.first);
    SegmentHeader header;
    REQUIRE(decode_segment_header(bytes, &header) == HeaderProblem::kNone);
    CHECK(header.flags == (format::kFlagSyncedMarks | format::kFlagEncrypted | format::kFlagSealedEntries));
    auto entry = decode_entry_header(bytes.data() + first_entry, header.id, first_entry);
    REQUIRE(entry);
    CHECK(entry->payload_size() == log.written[0].size() + format::kSectionTagSize);
  }
  SUBCASE("a flipped bit of ciphertext") {
    EncryptedLog log;
    flip_bit(log.first, first_entry + format::kEntryHeaderSize + 5, 3);
    log.check_corruption("bad payload checksum");
  }
  SUBCASE("a flipped bit of a tag") {
    EncryptedLog log;
    flip_bit(log.first, first_entry + format::kEntryHeaderSize + log.written[0].size() + 3, 0);
    log.check_corruption("bad payload checksum");
  }
  SUBCASE("a flipped bit of the wrapped key") {
    EncryptedLog log;
    flip_bit(log.first, format::kKeyBlockOffset + format::kKeyBlockWrappedOffset + 3, 1);
    log.check_corruption("bad key block");
  }
  SUBCASE("ciphertext changed with its checksums made to match fails authentication") {
    EncryptedLog log;
    rewrite_first_entry(log.first, [](EntryHeader&, std::byte* stored) { stored[2] ^= std::byte{0x10}; });
    log.check_corruption("encrypted entry fails authentication");
  }
  SUBCASE("an entry given another table, its checksum made to match, fails authentication") {
    EncryptedLog log;
    rewrite_first_entry(log.first, [](EntryHeader& h, std::byte*) { h.table += 1; });
    log.check_corruption("encrypted entry fails authentication");
  }
  // Flags no build writes, the header's checksum made to match: without
  // the sealing bit the entries' ciphertext and tags would pass for payloads.
  for (const uint16_t flags : {uint16_t{format::kFlagSyncedMarks | format::kFlagEncrypted},
                               uint16_t{format::kFlagSyncedMarks | format::kFlagEncrypted | format::kFlagSealedEntries |
                                        format::kFlagLz4Sections},
                               uint16_t{format::kFlagSyncedMarks | format::kFlagEncrypted | format::kFlagSealedEntries |
                                        format::kFlagWholeBlocks},
                               uint16_t{format::kFlagSyncedMarks | format::kFlagFlushGroups},
                               uint16_t{format::kFlagEncrypted | format::kFlagSealedEntries}}) {
    CAPTURE(flags);
    EncryptedLog log;
    auto bytes = read_file(log.first);
    SegmentHeader header;
    REQUIRE(decode_segment_header(bytes, &header) == HeaderProblem::kNone);
    header.flags = flags;
    encode_segment_header(header, std::span<std::byte, format::kHeaderSize>(bytes.data(), format::kHeaderSize));
    write_file(log.first, bytes);
    CHECK(decode_segment_header(bytes, &header) == HeaderProblem::kUnknownFlags);
    auto skip = replay_with(log.options.directory, with_keys(log.options.encryption, RecoveryMode::kSkip));
    for (const std::string& p : skip.payloads) {
      CHECK(std::find(log.written.begin(), log.written.end(), p) != log.written.end());  // never ciphertext
    }
  }
}

}  // namespace
}  // namespace commitlog
