// SPDX-License-Identifier: Apache-2.0
// RESP2, the Redis protocol: parsing client requests, encoding replies.
//
// A request is either a multibulk array, which redis-cli and
// redis-benchmark send:
//   *<n>\r\n  then n times  $<length>\r\n<length bytes>\r\n
// or an inline command (telnet), a line of words separated by blanks, with
// the quotes and escapes of Redis's sdssplitargs ("a b\x41", 'it\'s').
// Replies: +simple\r\n  -ERR message\r\n  :integer\r\n  $<length>\r\n<bytes>\r\n
// $-1\r\n (nil)  *<n>\r\n followed by n replies.
//
// The parser is stateless: it looks at the unconsumed bytes and either
// returns one complete request, says it needs more, or names the protocol
// error (after which the server replies -ERR and closes the connection, as
// Redis does). Lengths are checked against the limits before any byte of a
// bulk is awaited, so no request can make the server buffer more than
// `max_request` bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace commitlog::kv::resp {

struct Limits {
  uint64_t max_bulk = 512u << 20;     // largest argument
  uint64_t max_args = 1u << 20;       // most arguments in one request
  uint64_t max_request = 513u << 20;  // largest request, all of it
  uint64_t max_inline = 64u << 10;    // longest inline command line
};

struct Request {
  enum class State { kComplete, kIncomplete, kError };
  State state = State::kIncomplete;
  size_t consumed = 0;                 // bytes of the request (kComplete)
  // kComplete: views into the input, or into `unquoted`; may be empty.
  std::vector<std::string_view> args;
  std::string unquoted;  // an inline command's quoted words, unquoted
  std::string error;                   // "Protocol error: ..." (kError)
  // kIncomplete: how far a multibulk request was parsed, as offsets from
  // its start, so that the next call goes on from there.
  struct Progress {
    int64_t count = 0;     // arguments it announced; 0: none parsed yet
    size_t next = 0;       // where the next argument's length line starts
    uint64_t bytes = 0;    // of the arguments parsed
    std::vector<std::pair<size_t, size_t>> parsed;  // offset and size of each
  } progress;
};

// Parses the request at the start of `in` into `*out`. After kIncomplete,
// call again with the same request at the start of `in` and more of its
// bytes: the parse goes on where it stopped, so a request of many
// arguments arriving in small pieces costs time linear in its size. Any
// other use takes a fresh Request.
void parse_request(std::string_view in, const Limits& limits, Request* out);

// Reply encoders; each appends to `out`.
void simple(std::string* out, std::string_view text);  // text must not hold \r or \n
// "-<message>\r\n"; message starts with an error code such as ERR. Control
// characters in it are replaced, so a client's bytes cannot break the framing.
void error(std::string* out, std::string_view message);
void integer(std::string* out, int64_t value);
void bulk(std::string* out, std::string_view bytes);
void nil(std::string* out);
void array(std::string* out, size_t count);

// A decimal 64-bit integer as Redis reads one (string2ll), in lengths and
// arguments alike: an optional '-', no '+', spaces, leading zeros or "-0";
// nullopt otherwise, or out of range.
std::optional<int64_t> parse_integer(std::string_view text);

// `text` made printable for an error message: at most `max` bytes, control
// and non-ASCII bytes shown as '?'.
std::string printable(std::string_view text, size_t max = 128);

}  // namespace commitlog::kv::resp
