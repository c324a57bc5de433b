// SPDX-License-Identifier: Apache-2.0
// Redis's glob (stringmatchlen), iterative with one backtrack point for '*'.
#include "tools/kv/glob.h"

#include <utility>

namespace commitlog::kv {
namespace {

// Matches one character at pattern[*p] (a class, an escape or a literal),
// advancing *p past it.
bool match_one(std::string_view pattern, size_t* p, char c) {
  if (pattern[*p] == '[') {
    size_t i = *p + 1;
    const bool negate = i < pattern.size() && pattern[i] == '^';
    if (negate) ++i;
    bool hit = false;
    for (; i < pattern.size() && pattern[i] != ']'; ++i) {
      if (pattern[i] == '\\' && i + 1 < pattern.size()) {
        hit = hit || pattern[++i] == c;
      } else if (i + 2 < pattern.size() && pattern[i + 1] == '-') {  // "[a-]": 'a' to ']'
        char lo = pattern[i], hi = pattern[i + 2];
        if (lo > hi) std::swap(lo, hi);
        hit = hit || (c >= lo && c <= hi);
        i += 2;
      } else {
        hit = hit || pattern[i] == c;
      }
    }
    *p = i < pattern.size() ? i + 1 : i;
    return hit != negate;
  }
  if (pattern[*p] == '\\' && *p + 1 < pattern.size()) ++*p;
  return pattern[(*p)++] == c;
}

}  // namespace

bool glob_match(std::string_view pattern, std::string_view text) {
  if (text.empty()) return pattern.empty();  // stringmatchlen's rule: "*" alone does not match ""
  size_t p = 0, t = 0;
  size_t star_p = std::string_view::npos, star_t = 0;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star_p = ++p;
      star_t = t;
      continue;
    }
    if (p < pattern.size() && (pattern[p] == '?' ? (++p, true) : match_one(pattern, &p, text[t]))) {
      ++t;
      continue;
    }
    if (star_p == std::string_view::npos) return false;
    p = star_p;
    t = ++star_t;
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

}  // namespace commitlog::kv
