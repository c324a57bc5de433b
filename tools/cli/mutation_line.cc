// SPDX-License-Identifier: Apache-2.0
#include "tools/cli/mutation_line.h"

#include <charconv>
#include <cstring>
#include <string_view>

#include "tools/cli/base64.h"

namespace commitlog::tools {
namespace {

template <typename T>
char* put_number(char* p, T value) {
  return std::to_chars(p, p + 20, value).ptr;
}

char* put(char* p, std::string_view s) {
  std::memcpy(p, s.data(), s.size());
  return p + s.size();
}

}  // namespace

void append_mutation_line(Output& out, const ReplayedMutation& m) {
  constexpr size_t kFixed = 128;  // keys, punctuation and five numbers of at most 20 digits
  char* p = out.reserve(kFixed + base64_size(m.payload.size()));
  p = put(p, "{\"segment\":");
  p = put_number(p, m.position.segment);
  p = put(p, ",\"offset\":");
  p = put_number(p, m.position.offset);
  p = put(p, ",\"table\":");
  p = put_number(p, m.table);
  p = put(p, ",\"time_us\":");
  p = put_number(p, m.time_us);
  p = put(p, ",\"size\":");
  p = put_number(p, m.payload.size());
  p = put(p, ",\"payload\":\"");
  p = base64_encode(m.payload, p);
  p = put(p, "\"}\n");
  out.commit(p);
}

}  // namespace commitlog::tools
