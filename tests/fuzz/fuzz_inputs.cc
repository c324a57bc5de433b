// SPDX-License-Identifier: Apache-2.0
#include "tests/fuzz/fuzz_inputs.h"

#include <cstdlib>
#include <string>
#include <string_view>
#include <variant>

#include "commitlog/config.h"
#include "tools/kv/resp.h"
#include "segment/segment_image.h"
#include "segment/segment_reader.h"

namespace commitlog::fuzzing {
namespace {

// Master key 1 of tests/support/test_keys.h (seed 1), which wrote the
// encrypted seeds, so that inputs mutated from them reach the sections' GCM.
class FixedKeys final : public KeyProvider {
 public:
  uint32_t active_key_id() const override { return 1; }
  Result<MasterKey> key(uint32_t id) const override {
    if (id != 1) return Status::not_found("no key " + std::to_string(id));
    MasterKey key;
    for (size_t i = 0; i < key.size(); ++i) key[i] = static_cast<std::byte>((31 + i * 7 + 101) & 0xff);
    return key;
  }
  std::vector<uint32_t> key_ids() const override { return {1}; }
  std::string source() const override { return "the fuzzer's key"; }
};

}  // namespace

size_t read_segment(std::span<const std::byte> file) {
  SegmentHeader header;
  if (decode_segment_header(file, &header) != HeaderProblem::kNone) return 0;
  static const FixedKeys keys;
  const SegmentImage image = load_segment_image(file, header, &keys);
  SegmentReader reader(image, header);
  size_t entries = 0;
  // Skip mode: keep going after damage, as far as the reader can.
  while (true) {
    SegmentItem item = reader.next();
    if (std::holds_alternative<SegmentEnd>(item)) return entries;
    if (std::holds_alternative<SegmentEntry>(item)) ++entries;
  }
}

namespace {

void require(bool holds) {
  if (!holds) std::abort();
}

// The request as a multibulk array, as redis-cli sends it.
std::string encode(const std::vector<std::string_view>& args) {
  std::string out;
  kv::resp::array(&out, args.size());
  for (std::string_view a : args) kv::resp::bulk(&out, a);
  return out;
}

}  // namespace

size_t read_requests(std::span<const std::byte> bytes) {
  // Small limits, so that inputs of a few KiB reach every one of them.
  kv::resp::Limits limits;
  limits.max_bulk = 512;
  limits.max_args = 16;
  limits.max_request = 2048;
  limits.max_inline = 256;
  std::string_view in(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  kv::resp::Request request, again;
  size_t requests = 0;
  while (!in.empty()) {
    kv::resp::parse_request(in, limits, &request);
    if (request.state != kv::resp::Request::State::kComplete) {
      require(request.state == kv::resp::Request::State::kIncomplete || !request.error.empty());
      return requests;
    }
    require(request.consumed > 0 && request.consumed <= in.size());
    require(request.args.size() <= limits.max_args || in[0] != '*');
    uint64_t total = 0;
    auto within = [](std::string_view arg, std::string_view span) {
      return arg.data() >= span.data() && arg.data() + arg.size() <= span.data() + span.size();
    };
    for (std::string_view arg : request.args) {
      // The input's own bytes, or an inline command's quoted word, unquoted.
      require(within(arg, in.substr(0, request.consumed)) || (in[0] != '*' && within(arg, request.unquoted)));
      total += arg.size();
    }
    if (in[0] == '*') require(total <= limits.max_request);
    // In two pieces, the second call going on where the first stopped.
    kv::resp::Request pieces;
    kv::resp::parse_request(in.substr(0, request.consumed / 2), limits, &pieces);
    require(pieces.state == kv::resp::Request::State::kIncomplete);
    kv::resp::parse_request(in.substr(0, request.consumed), limits, &pieces);
    require(pieces.state == kv::resp::Request::State::kComplete && pieces.consumed == request.consumed &&
            pieces.args == request.args);
    if (!request.args.empty() && request.args.size() <= limits.max_args && total <= limits.max_request) {
      const std::string encoded = encode(request.args);
      kv::resp::parse_request(encoded, limits, &again);
      require(again.state == kv::resp::Request::State::kComplete && again.consumed == encoded.size() &&
              again.args == request.args);
    }
    in.remove_prefix(request.consumed);
    ++requests;
  }
  return requests;
}

bool read_config(std::span<const std::byte> text) {
  const std::string yaml(reinterpret_cast<const char*>(text.data()), text.size());
  return load_config_string(yaml, "fuzz.yaml").ok();
}

}  // namespace commitlog::fuzzing
