// SPDX-License-Identifier: Apache-2.0
// commitlog-kv's bytes: the mutation format (round trip, and every malformed
// payload refused as corruption), requests arriving in pieces, and the glob
// of SCAN, KEYS and CONFIG GET.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "tools/kv/glob.h"
#include "tools/kv/mutation.h"
#include "tools/kv/resp.h"
#include "tools/kv/value.h"

namespace commitlog::kv {
namespace {

std::span<const std::byte> bytes(const std::string& s) {
  return std::as_bytes(std::span(s.data(), s.size()));
}

TEST_CASE("kv format: writes round-trip, with expiry in the stored value") {
  const std::vector<EngineWrite> writes = {
      {EngineWrite::Kind::kPut, "key", encode_value(1234, std::string("v\0lue", 5))},
      {EngineWrite::Kind::kDelete, "gone", {}},
      {EngineWrite::Kind::kClear, {}, {}},
  };
  std::string payload;
  encode_writes(writes, &payload);
  std::vector<EngineWrite> decoded;
  REQUIRE(decode(bytes(payload), &decoded).ok());
  REQUIRE(decoded.size() == 3);
  CHECK(decoded[0].key == "key");
  const auto v = decode_value(decoded[0].value);
  REQUIRE(v);
  CHECK(v->expire_at_ms == 1234);
  CHECK(v->data == std::string_view("v\0lue", 5));
  CHECK(v->expired(1234));
  CHECK_FALSE(v->expired(1233));
  CHECK(decoded[1].kind == EngineWrite::Kind::kDelete);
  CHECK(decoded[1].key == "gone");
  CHECK(decoded[2].kind == EngineWrite::Kind::kClear);
  CHECK(decode_checkpoint(encode_checkpoint({7, 99})) == Position{7, 99});
}

TEST_CASE("kv format: an older log's set is a put without expiry") {
  // op 1, one pair, "k", "v"
  const std::string payload("\x01\x01\x01k\x01v", 6);
  std::vector<EngineWrite> decoded;
  REQUIRE(decode(bytes(payload), &decoded).ok());
  REQUIRE(decoded.size() == 1);
  CHECK(decode_value(decoded[0].value)->expire_at_ms == 0);
  CHECK(decode_value(decoded[0].value)->data == "v");
}

TEST_CASE("kv format: every truncation and forgery is corruption, never a crash") {
  std::string payload;
  encode_writes(std::vector<EngineWrite>{{EngineWrite::Kind::kPut, "key", encode_value(0, "value")}}, &payload);
  std::vector<EngineWrite> decoded;
  for (size_t n = 0; n < payload.size(); ++n) {
    CAPTURE(n);
    CHECK(decode(bytes(payload.substr(0, n)), &decoded).code() == ErrorCode::kCorruption);
  }
  CHECK(decode(bytes(payload + "x"), &decoded).code() == ErrorCode::kCorruption);
  CHECK(decode(bytes(std::string("\x04\xff\xff\xff\xff\x0f", 6)), &decoded).code() == ErrorCode::kCorruption);
  CHECK(decode(bytes(std::string("\x04\x01\x07", 3)), &decoded).code() == ErrorCode::kCorruption);
  CHECK(decode(bytes(std::string("\x09\x01", 2)), &decoded).code() == ErrorCode::kCorruption);
  CHECK_FALSE(decode_value("short"));
  CHECK_FALSE(decode_checkpoint("15 bytes only!!"));
}

TEST_CASE("kv format: a request arriving a byte at a time parses as in one piece, going on where it stopped") {
  std::string wire;
  std::vector<std::string> want = {"MSET", "", std::string(300, 'v'), "k2", "x\r\ny"};
  wire += "*" + std::to_string(want.size()) + "\r\n";
  std::vector<size_t> ends;  // where each argument's bytes end
  for (const std::string& arg : want) {
    wire += "$" + std::to_string(arg.size()) + "\r\n" + arg + "\r\n";
    ends.push_back(wire.size());
  }
  const std::string next = "*1\r\n$4\r\nPING\r\n";
  const std::string stream = wire + next;
  resp::Limits limits;
  resp::Request request;
  size_t fed = 0;
  for (fed = 1; fed <= wire.size(); ++fed) {
    resp::parse_request(std::string_view(stream).substr(0, fed), limits, &request);
    if (request.state != resp::Request::State::kIncomplete) break;
    // Each whole argument so far is kept, so the next call starts after it.
    const auto whole = static_cast<size_t>(std::count_if(ends.begin(), ends.end(), [&](size_t e) { return e <= fed; }));
    CHECK(request.progress.parsed.size() == whole);
  }
  REQUIRE(request.state == resp::Request::State::kComplete);
  CHECK(fed == wire.size());
  CHECK(request.consumed == wire.size());
  CHECK(std::vector<std::string>(request.args.begin(), request.args.end()) == want);
  // The next request, from a completed one, parses afresh.
  resp::parse_request(std::string_view(stream).substr(request.consumed), limits, &request);
  REQUIRE(request.state == resp::Request::State::kComplete);
  CHECK(std::vector<std::string>(request.args.begin(), request.args.end()) == std::vector<std::string>{"PING"});
  // Limits hold across pieces: the third argument passes the request's bound.
  limits.max_request = 200;
  resp::Request bounded;
  resp::parse_request(std::string_view(wire).substr(0, 20), limits, &bounded);
  CHECK(bounded.state == resp::Request::State::kIncomplete);
  resp::parse_request(wire, limits, &bounded);
  CHECK(bounded.state == resp::Request::State::kError);
}

// The words of the inline command `line`, or nullopt for a protocol error.
std::optional<std::vector<std::string>> inline_words(const std::string& line) {
  resp::Request request;
  resp::parse_request(line, resp::Limits{}, &request);
  if (request.state != resp::Request::State::kComplete) return std::nullopt;
  CHECK(request.consumed == line.size());
  return std::vector<std::string>(request.args.begin(), request.args.end());
}

TEST_CASE("kv format: an inline command is split as Redis's sdssplitargs splits it") {
  using Words = std::vector<std::string>;
  CHECK(inline_words("SET  k\tv \r\n") == Words{"SET", "k", "v"});
  CHECK(inline_words("SET \"a b\" \"c\\x41\\n\\q\\\"\"\n") == Words{"SET", "a b", "cA\nq\""});
  CHECK(inline_words("ECHO 'it\\'s' 'x\\n'\r\n") == Words{"ECHO", "it's", "x\\n"});
  CHECK(inline_words("ECHO a\"b c\" \"\" ''\r\n") == Words{"ECHO", "ab c", "", ""});
  CHECK(inline_words("ECHO \"\\x4g\\x\" \"\\x00\"\r\n") == Words{"ECHO", "x4gx", std::string(1, '\0')});
  CHECK(inline_words("ECHO \"a\"\v a\vb\r\n") == Words{"ECHO", "a", "a\vb"});  // \v: blank, no separator
  CHECK(inline_words("  \r\n") == Words{});
  for (const char* unbalanced : {"ECHO \"abc\r\n", "ECHO 'abc\r\n", "ECHO \"abc\"d\r\n", "ECHO 'a'b\r\n",
                                 "ECHO \"\\\r\n", "ECHO a\"b c\"d\r\n"}) {
    CAPTURE(unbalanced);
    resp::Request request;
    resp::parse_request(unbalanced, resp::Limits{}, &request);
    CHECK(request.state == resp::Request::State::kError);
    CHECK(request.error == "Protocol error: unbalanced quotes in request");
  }
  // A line arriving in pieces is complete only with its end.
  const std::string line = "SET \"k 1\" v\r\n";
  for (size_t n = 1; n < line.size(); ++n) {
    resp::Request request;
    resp::parse_request(std::string_view(line).substr(0, n), resp::Limits{}, &request);
    CHECK(request.state == resp::Request::State::kIncomplete);
  }
}

TEST_CASE("kv format: Redis's glob") {
  CHECK(glob_match("user:*", "user:42"));
  CHECK_FALSE(glob_match("user:*", "use"));
  CHECK(glob_match("h?llo", "hello"));
  CHECK(glob_match("h[ae]llo", "hallo"));
  CHECK_FALSE(glob_match("h[^e]llo", "hello"));
  CHECK(glob_match("h[a-c]llo", "hbllo"));
  CHECK(glob_match("a*b*c", "aXXbYYc"));
  CHECK_FALSE(glob_match("a*b*c", "aXXbYY"));
  CHECK(glob_match("\\*", "*"));
  CHECK_FALSE(glob_match("\\*", "x"));
  // Malformed patterns match what they can and never read past their end.
  CHECK_FALSE(glob_match("[", "a"));
  CHECK(glob_match("\\", "\\"));
  CHECK(glob_match("[a-", "a"));
  // As stringmatchlen: "[a-]" is a range from 'a' to ']', the class left open.
  CHECK(glob_match("[a-]", "a"));
  CHECK(glob_match("[a-]", "]"));
  CHECK(glob_match("[a-]", "^"));
  CHECK_FALSE(glob_match("[a-]", "-"));
  CHECK(glob_match("[a-]*", "*"));
  CHECK_FALSE(glob_match("[a-]*", "ab"));
  CHECK(glob_match("a[a-]", "a]"));
  CHECK(glob_match("", ""));
  CHECK_FALSE(glob_match("*", ""));
  CHECK_FALSE(glob_match("", "a"));
  CHECK(glob_match("append*", "appendfsync"));
}

}  // namespace
}  // namespace commitlog::kv
