// SPDX-License-Identifier: Apache-2.0
// Who may talk to the server, with Redis's names and replies, so that its
// users' habits carry over:
//   - a password for the default user (--requirepass, or --requirepass-file
//     FILE, its first line): every command but AUTH and QUIT then gets
//     "-NOAUTH Authentication required." until `AUTH <password>` (or
//     `AUTH default <password>`) succeeds; a wrong one gets "-WRONGPASS
//     invalid username-password pair or user is disabled.". Until then a
//     request may carry only small arguments, as Redis 7 allows, so an
//     unauthenticated client cannot make the server buffer much;
//   - HELLO's AUTH option logs in as AUTH does, before anything else of
//     HELLO (Redis 6+ clients log in that way); without it, HELLO too gets
//     NOAUTH until the password is given;
//   - protected mode: listening beyond the loopback without a password is
//     refused at start unless --protected-mode no.
//
// Thread-safety: an Auth is immutable after construction; admit() may run
// on any thread, each call with its own connection's state.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "commitlog/status.h"
#include "tools/kv/resp.h"

namespace commitlog::kv {

class Auth {
 public:
  explicit Auth(std::string password = {}) : password_(std::move(password)) {}

  bool required() const { return !password_.empty(); }

  // Whether the request `args` of a connection whose state is
  // `*authenticated` may be executed. When it may not, its reply (NOAUTH,
  // or AUTH's own: OK, WRONGPASS, an error) is appended to `out`. AUTH, and
  // HELLO with its AUTH option, update `*authenticated`; a HELLO admitted
  // has had its AUTH done and is well formed (parse_hello).
  bool admit(std::span<const std::string_view> args, bool* authenticated, std::string* out) const;

  // The parser limits for a connection in that state: `limits` once
  // authenticated, or when no password is required; small ones before.
  resp::Limits limits(const resp::Limits& limits, bool authenticated) const;

 private:
  // Whether `user` may log in with `password`: the default user alone, with
  // any password when none is required (Redis's "nopass").
  bool accepts(std::string_view user, std::string_view password) const;

  std::string password_;
};

// HELLO [protover [AUTH username password] [SETNAME clientname]], checked
// as Redis checks it.
struct Hello {
  int64_t version = 0;  // 0: not given
  std::optional<std::string_view> user, password;  // the AUTH option
  std::optional<std::string_view> name;            // the SETNAME option
  std::string error;  // the reply to a malformed request, without its '-'
};
Hello parse_hello(std::span<const std::string_view> args);

// Ok, or kInvalidArgument naming --requirepass when `password`, given with
// it, is empty: that would require no password, silently.
[[nodiscard]] Status check_requirepass(const std::string& password);

// The password in `path`: its first line, without the line end. Errors name
// the file; an empty password is refused.
[[nodiscard]] Result<std::string> read_password_file(const std::string& path);

// Ok, or kInvalidArgument explaining why `bind` may not be served: it is not
// a loopback address, no password is set and protected mode is on.
[[nodiscard]] Status check_protected_mode(const std::string& bind, bool password_set, bool protected_mode);

}  // namespace commitlog::kv
