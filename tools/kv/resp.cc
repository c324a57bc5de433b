// SPDX-License-Identifier: Apache-2.0
#include "tools/kv/resp.h"

#include <charconv>

#include <fmt/core.h>

namespace commitlog::kv::resp {
namespace {

// Finds the line starting at `pos`; false when no \r\n yet.
bool line_at(std::string_view in, size_t pos, std::string_view* line) {
  const size_t end = in.find("\r\n", pos);
  if (end == std::string_view::npos) return false;
  *line = in.substr(pos, end - pos);
  return true;
}

void fail(Request* out, std::string message) {
  out->state = Request::State::kError;
  out->error = "Protocol error: " + std::move(message);
}

// isspace() in the C locale.
bool is_blank(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The byte that "\<c>" stands for in double quotes.
char unescape(char c) {
  switch (c) {
    case 'n': return '\n';
    case 'r': return '\r';
    case 't': return '\t';
    case 'b': return '\b';
    case 'a': return '\a';
    default: return c;
  }
}

// Appends the word at line[*pos] to `text` as Redis's sdssplitargs reads it,
// moving *pos past it: quotes may open anywhere in a word; within double
// quotes \xHH and \<c> are escapes, within single quotes only \'. False for
// unbalanced quotes: one left open, or a closing one followed by no blank.
bool read_word(std::string_view line, size_t* pos, std::string* text) {
  char quote = 0;  // the open quote, if any
  for (size_t& i = *pos; i < line.size(); ++i) {
    const char c = line[i];
    const std::string_view rest = line.substr(i + 1);
    if (quote == 0) {
      if (c == ' ' || c == '\t' || c == '\r' || c == '\n') return true;
      if (c == '"' || c == '\'') {
        quote = c;
      } else {
        text->push_back(c);
      }
    } else if (c == quote) {
      ++i;
      return rest.empty() || is_blank(rest[0]);
    } else if (quote == '"' && c == '\\' && rest.size() >= 3 && rest[0] == 'x' &&
               hex_digit(rest[1]) >= 0 && hex_digit(rest[2]) >= 0) {
      text->push_back(static_cast<char>(hex_digit(rest[1]) * 16 + hex_digit(rest[2])));
      i += 3;
    } else if (c == '\\' && (quote == '"' ? !rest.empty() : rest.starts_with('\''))) {
      text->push_back(unescape(rest[0]));
      ++i;
    } else {
      text->push_back(c);
    }
  }
  return quote == 0;
}

void parse_inline(std::string_view in, const Limits& limits, Request* out) {
  const size_t newline = in.find('\n');
  if (newline == std::string_view::npos) {
    if (in.size() > limits.max_inline) fail(out, "too big inline request");
    return;
  }
  if (newline > limits.max_inline) return fail(out, "too big inline request");
  std::string_view line = in.substr(0, newline);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  std::string& text = out->unquoted;
  text.clear();
  // No word grows in unquoting, so the views below stay valid; a line
  // without quotes needs none of it.
  if (line.find_first_of("\"'") != std::string_view::npos) text.reserve(line.size());
  for (size_t pos = 0;;) {
    while (pos < line.size() && is_blank(line[pos])) ++pos;
    if (pos == line.size()) break;
    const size_t begin = pos, start = text.size();
    if (!read_word(line, &pos, &text)) return fail(out, "unbalanced quotes in request");
    if (text.size() - start == pos - begin) {  // no quotes: the word as the line holds it
      text.resize(start);
      out->args.push_back(line.substr(begin, pos - begin));
    } else {
      out->args.emplace_back(text.data() + start, text.size() - start);
    }
  }
  out->state = Request::State::kComplete;
  out->consumed = newline + 1;
}

}  // namespace

void parse_request(std::string_view in, const Limits& limits, Request* out) {
  // Kept across calls, capacity and all: the argument vectors are reused
  // from request to request.
  Request::Progress& progress = out->progress;
  if (out->state != Request::State::kIncomplete) progress.count = 0;  // a new request
  if (progress.count == 0) {
    progress.next = 0;
    progress.bytes = 0;
    progress.parsed.clear();
  }
  out->state = Request::State::kIncomplete;
  out->consumed = 0;
  out->args.clear();
  out->error.clear();
  if (in.empty()) return;
  if (in[0] != '*') return parse_inline(in, limits, out);

  std::string_view line;
  if (progress.count == 0) {
    if (!line_at(in, 0, &line)) {
      if (in.size() > limits.max_inline) fail(out, "too big multibulk count line");
      return;
    }
    const std::optional<int64_t> count = parse_integer(line.substr(1));
    if (!count || *count > static_cast<int64_t>(limits.max_args)) return fail(out, "invalid multibulk length");
    if (*count <= 0) {  // "*0" and "*-1" are empty requests, skipped as Redis does
      out->state = Request::State::kComplete;
      out->consumed = line.size() + 2;
      return;
    }
    progress.count = *count;
    progress.next = line.size() + 2;
  }
  while (static_cast<int64_t>(progress.parsed.size()) < progress.count) {
    size_t pos = progress.next;
    if (pos >= in.size()) break;
    if (in[pos] != '$') {
      return fail(out, fmt::format("expected '$', got '{}'", printable(in.substr(pos, 1))));
    }
    if (!line_at(in, pos, &line)) {
      if (in.size() - pos > limits.max_inline) return fail(out, "too big bulk length line");
      break;
    }
    const std::optional<int64_t> length = parse_integer(line.substr(1));
    if (!length || *length < 0) return fail(out, "invalid bulk length");
    if (static_cast<uint64_t>(*length) > limits.max_bulk) {
      return fail(out, fmt::format("bulk length {} exceeds the maximum of {} bytes", *length, limits.max_bulk));
    }
    if (progress.bytes + static_cast<uint64_t>(*length) > limits.max_request) {
      return fail(out, fmt::format("request larger than {} bytes", limits.max_request));
    }
    pos += line.size() + 2;
    const auto size = static_cast<size_t>(*length);
    if (in.size() - pos < size + 2) break;
    if (in[pos + size] != '\r' || in[pos + size + 1] != '\n') return fail(out, "bulk not followed by CRLF");
    progress.parsed.emplace_back(pos, size);
    progress.bytes += size;
    progress.next = pos + size + 2;
  }
  if (static_cast<int64_t>(progress.parsed.size()) < progress.count) return;
  for (const auto& [at, size] : progress.parsed) out->args.push_back(in.substr(at, size));
  out->state = Request::State::kComplete;
  out->consumed = progress.next;
}

void simple(std::string* out, std::string_view text) {
  out->push_back('+');
  out->append(text);
  out->append("\r\n");
}

void error(std::string* out, std::string_view message) {
  out->push_back('-');
  for (char c : message) out->push_back(c == '\r' || c == '\n' ? ' ' : c);
  out->append("\r\n");
}

void integer(std::string* out, int64_t value) {
  fmt::format_to(std::back_inserter(*out), ":{}\r\n", value);
}

void bulk(std::string* out, std::string_view bytes) {
  fmt::format_to(std::back_inserter(*out), "${}\r\n", bytes.size());
  out->append(bytes);
  out->append("\r\n");
}

void nil(std::string* out) { out->append("$-1\r\n"); }

void array(std::string* out, size_t count) {
  fmt::format_to(std::back_inserter(*out), "*{}\r\n", count);
}

std::optional<int64_t> parse_integer(std::string_view text) {
  const std::string_view digits = text.starts_with('-') ? text.substr(1) : text;
  if (digits.empty() || (digits[0] == '0' && (digits.size() > 1 || digits.size() < text.size()))) {
    return std::nullopt;
  }
  int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::string printable(std::string_view text, size_t max) {
  std::string out;
  for (size_t i = 0; i < text.size() && i < max; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    out.push_back(c >= 0x20 && c < 0x7f ? static_cast<char>(c) : '?');
  }
  if (text.size() > max) out += "...";
  return out;
}

}  // namespace commitlog::kv::resp
