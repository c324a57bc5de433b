// SPDX-License-Identifier: Apache-2.0
#include "tools/kv/auth.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <optional>

namespace commitlog::kv {
namespace {

// Redis 7's bounds on an unauthenticated request.
constexpr uint64_t kUnauthenticatedBulk = 16u << 10;
constexpr uint64_t kUnauthenticatedArgs = 10;

bool equals_upper(std::string_view word, std::string_view upper) {
  return word.size() == upper.size() &&
         std::equal(word.begin(), word.end(), upper.begin(), [](char a, char b) {
           return std::toupper(static_cast<unsigned char>(a)) == b;
         });
}

// Compares without stopping at the first difference, so the time taken
// says nothing of how much of a guess was right.
bool same_secret(std::string_view a, std::string_view b) {
  unsigned char differ = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < a.size(); ++i) {
    differ |= static_cast<unsigned char>(a[i] ^ (b.empty() ? 0 : b[i % b.size()]));
  }
  return differ == 0;
}

// Whether the address `bind` is a loopback one; nullopt when it is no address.
std::optional<bool> is_loopback(const std::string& bind) {
  in_addr a4{};
  if (::inet_pton(AF_INET, bind.c_str(), &a4) == 1) return (ntohl(a4.s_addr) >> 24) == 127;
  in6_addr a6{};
  if (::inet_pton(AF_INET6, bind.c_str(), &a6) == 1) return IN6_IS_ADDR_LOOPBACK(&a6);
  return std::nullopt;
}

}  // namespace

bool Auth::accepts(std::string_view user, std::string_view password) const {
  if (!required()) return user == "default";
  return same_secret(password, password_) && user == "default";
}

bool Auth::admit(std::span<const std::string_view> args, bool* authenticated, std::string* out) const {
  if (equals_upper(args[0], "HELLO")) {
    const Hello hello = parse_hello(args);
    if (!hello.error.empty()) {
      resp::error(out, hello.error);
      return false;
    }
    if (hello.user) {
      if (!accepts(*hello.user, *hello.password)) {
        resp::error(out, "WRONGPASS invalid username-password pair or user is disabled.");
        return false;
      }
      *authenticated = true;
    }
    if (!required() || *authenticated) return true;
    resp::error(out,
                "NOAUTH HELLO must be called with the client already authenticated, otherwise the "
                "HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and "
                "select the RESP protocol version at the same time");
    return false;
  }
  if (equals_upper(args[0], "AUTH")) {
    if (args.size() < 2) {
      resp::error(out, "ERR wrong number of arguments for 'auth' command");
    } else if (args.size() > 3) {
      resp::error(out, "ERR syntax error");
    } else if (args.size() == 2 && !required()) {
      resp::error(out,
                  "ERR AUTH <password> called without any password configured for the default "
                  "user. Are you sure your configuration is correct?");
    } else if (accepts(args.size() == 2 ? "default" : args[1], args.back())) {
      *authenticated = true;
      resp::simple(out, "OK");
    } else {
      resp::error(out, "WRONGPASS invalid username-password pair or user is disabled.");
    }
    return false;
  }
  if (!required() || *authenticated || equals_upper(args[0], "QUIT")) return true;
  resp::error(out, "NOAUTH Authentication required.");
  return false;
}

resp::Limits Auth::limits(const resp::Limits& limits, bool authenticated) const {
  if (!required() || authenticated) return limits;
  resp::Limits small = limits;
  small.max_bulk = std::min(small.max_bulk, kUnauthenticatedBulk);
  small.max_args = std::min(small.max_args, kUnauthenticatedArgs);
  small.max_request = std::min(small.max_request, kUnauthenticatedBulk * kUnauthenticatedArgs);
  return small;
}

Hello parse_hello(std::span<const std::string_view> args) {
  Hello hello;
  if (args.size() >= 2) {
    const std::optional<int64_t> version = resp::parse_integer(args[1]);
    if (!version) {
      hello.error = "ERR Protocol version is not an integer or out of range";
      return hello;
    }
    hello.version = *version;
    if (hello.version < 2 || hello.version > 3) {
      hello.error = "NOPROTO unsupported protocol version";
      return hello;
    }
  }
  for (size_t i = 2; i < args.size(); ++i) {
    const size_t more = args.size() - 1 - i;
    if (equals_upper(args[i], "AUTH") && more >= 2) {
      hello.user = args[i + 1];
      hello.password = args[i + 2];
      i += 2;
    } else if (equals_upper(args[i], "SETNAME") && more >= 1) {
      hello.name = args[++i];
      // Redis's rule: printable ASCII without spaces.
      if (!std::all_of(hello.name->begin(), hello.name->end(), [](char c) { return c > ' ' && c <= '~'; })) {
        hello.error = "ERR Client names cannot contain spaces, newlines or special characters.";
        return hello;
      }
    } else {
      hello.error = "ERR Syntax error in HELLO option '" + resp::printable(args[i], 64) + "'";
      return hello;
    }
  }
  return hello;
}

Status check_requirepass(const std::string& password) {
  if (!password.empty()) return {};
  return Status::invalid_argument(
      "--requirepass: the password is empty, which would require none; give one, or leave the option out");
}

Result<std::string> read_password_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::from_errno(errno, "--requirepass-file " + path);
  std::string password;
  std::getline(in, password);
  if (!password.empty() && password.back() == '\r') password.pop_back();
  if (in.bad()) return Status::io_error("--requirepass-file " + path + ": cannot be read");
  if (password.empty()) {
    return Status::invalid_argument("--requirepass-file " + path + ": its first line is empty");
  }
  return password;
}

Status check_protected_mode(const std::string& bind, bool password_set, bool protected_mode) {
  const std::optional<bool> loopback = is_loopback(bind);
  if (!loopback) return Status::invalid_argument("--bind " + bind + ": not an IPv4 or IPv6 address");
  if (!protected_mode || password_set || *loopback) return {};
  return Status::invalid_argument(
      "--bind " + bind +
      " accepts clients from other machines, and no password is set (protected mode): set "
      "--requirepass or --requirepass-file, bind a loopback address such as 127.0.0.1, or give "
      "--protected-mode no to serve anyone who can reach this port");
}

}  // namespace commitlog::kv
