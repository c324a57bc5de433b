// SPDX-License-Identifier: Apache-2.0
#include "tools/kv/mutation.h"

namespace commitlog::kv {

void put_varint(uint64_t value, std::string* out) {
  while (value >= 0x80) {
    out->push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out->push_back(static_cast<char>(value));
}

bool get_varint(std::string_view in, size_t* pos, uint64_t* value) {
  uint64_t result = 0;
  for (unsigned shift = 0; shift < 64 && *pos < in.size(); shift += 7) {
    const auto byte = static_cast<uint8_t>(in[(*pos)++]);
    result |= uint64_t{byte & 0x7fu} << shift;
    if ((byte & 0x80) == 0) {
      *value = result;
      return true;
    }
  }
  return false;
}

namespace {

void put_string(std::string_view s, std::string* out) {
  put_varint(s.size(), out);
  out->append(s);
}

void encode_strings(Op op, std::span<const std::string_view> strings, size_t count,
                    std::string* out) {
  size_t bytes = 1 + 10;
  for (std::string_view s : strings) bytes += s.size() + 5;
  out->clear();
  out->reserve(bytes);
  out->push_back(static_cast<char>(op));
  put_varint(count, out);
  for (std::string_view s : strings) put_string(s, out);
}

}  // namespace

void encode_set(std::span<const std::string_view> keys_and_values, std::string* out) {
  encode_strings(Op::kSet, keys_and_values, keys_and_values.size() / 2, out);
}

void encode_delete(std::span<const std::string_view> keys, std::string* out) {
  encode_strings(Op::kDelete, keys, keys.size(), out);
}

void encode_marker(uint64_t snapshot, std::string* out) {
  out->clear();
  out->push_back(static_cast<char>(Op::kSnapshotMarker));
  put_varint(snapshot, out);
}

Status decode(std::span<const std::byte> payload, DecodedMutation* out) {
  const std::string_view in(reinterpret_cast<const char*>(payload.data()), payload.size());
  if (in.empty()) return Status::corruption("kv mutation: empty payload");
  out->op = static_cast<Op>(in[0]);
  out->strings.clear();
  size_t pos = 1;
  uint64_t count = 0;
  if (!get_varint(in, &pos, &count)) return Status::corruption("kv mutation: truncated count");
  size_t per_item = 0;
  switch (out->op) {
    case Op::kSnapshotMarker:
      out->snapshot = count;
      return pos == in.size() ? Status{}
                              : Status::corruption("kv mutation: bytes after a snapshot marker");
    case Op::kSet: per_item = 2; break;
    case Op::kDelete: per_item = 1; break;
    default:
      return Status::corruption("kv mutation: unknown op " +
                                std::to_string(static_cast<int>(in[0])));
  }
  // Each string takes at least one byte, which bounds a forged count.
  if (count == 0 || count > in.size()) return Status::corruption("kv mutation: bad count");
  for (uint64_t i = 0; i < count * per_item; ++i) {
    uint64_t length = 0;
    if (!get_varint(in, &pos, &length) || length > in.size() - pos) {
      return Status::corruption("kv mutation: truncated string");
    }
    out->strings.push_back(in.substr(pos, length));
    pos += length;
  }
  if (pos != in.size()) return Status::corruption("kv mutation: trailing bytes");
  return {};
}

}  // namespace commitlog::kv
