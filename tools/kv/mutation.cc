// SPDX-License-Identifier: Apache-2.0
#include "tools/kv/mutation.h"

#include "tools/kv/value.h"

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

bool get_string(std::string_view in, size_t* pos, std::string* out) {
  uint64_t length = 0;
  if (!get_varint(in, pos, &length) || length > in.size() - *pos) return false;
  out->assign(in.substr(*pos, length));
  *pos += length;
  return true;
}

}  // namespace

void encode_writes(std::span<const EngineWrite> writes, std::string* out) {
  size_t bytes = 1 + 10;
  for (const EngineWrite& w : writes) bytes += 1 + w.key.size() + w.value.size() + 10;
  out->clear();
  out->reserve(bytes);
  out->push_back(static_cast<char>(Op::kWrites));
  put_varint(writes.size(), out);
  for (const EngineWrite& w : writes) {
    out->push_back(static_cast<char>(w.kind));
    if (w.kind == EngineWrite::Kind::kClear) continue;
    put_string(w.key, out);
    if (w.kind == EngineWrite::Kind::kPut) put_string(w.value, out);
  }
}

Status decode(std::span<const std::byte> payload, std::vector<EngineWrite>* out) {
  const std::string_view in(reinterpret_cast<const char*>(payload.data()), payload.size());
  if (in.empty()) return Status::corruption("kv mutation: empty payload");
  const auto op = static_cast<Op>(in[0]);
  out->clear();
  size_t pos = 1;
  uint64_t count = 0;
  if (!get_varint(in, &pos, &count)) return Status::corruption("kv mutation: truncated count");
  if (op == Op::kMarker) return {};
  // Each write takes at least one byte, which bounds a forged count.
  if (count == 0 || count > in.size()) return Status::corruption("kv mutation: bad count");
  for (uint64_t i = 0; i < count; ++i) {
    EngineWrite w;
    if (op == Op::kWrites) {
      if (pos >= in.size() || static_cast<uint8_t>(in[pos]) > 2)
        return Status::corruption("kv mutation: bad write kind");
      w.kind = static_cast<EngineWrite::Kind>(in[pos++]);
    } else if (op == Op::kSet) {
      w.kind = EngineWrite::Kind::kPut;
    } else if (op == Op::kDelete) {
      w.kind = EngineWrite::Kind::kDelete;
    } else {
      return Status::corruption("kv mutation: unknown op " + std::to_string(static_cast<int>(in[0])));
    }
    if (w.kind != EngineWrite::Kind::kClear && !get_string(in, &pos, &w.key))
      return Status::corruption("kv mutation: truncated key");
    if (w.kind == EngineWrite::Kind::kPut) {
      std::string value;
      if (!get_string(in, &pos, &value)) return Status::corruption("kv mutation: truncated value");
      w.value = op == Op::kSet ? encode_value(0, value) : std::move(value);
    }
    out->push_back(std::move(w));
  }
  if (pos != in.size()) return Status::corruption("kv mutation: trailing bytes");
  return {};
}

}  // namespace commitlog::kv
