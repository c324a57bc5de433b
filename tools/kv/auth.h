// Who may talk to the server, with Redis's names and replies, so that its
// users' habits carry over:
//   - a password for the default user (--requirepass, or --requirepass-file
//     FILE, its first line): every command but AUTH and QUIT then gets
//     "-NOAUTH Authentication required." until `AUTH <password>` (or
//     `AUTH default <password>`) succeeds; a wrong one gets "-WRONGPASS
//     invalid username-password pair or user is disabled.". Until then a
//     request may carry only small arguments, as Redis 7 allows, so an
//     unauthenticated client cannot make the server buffer much;
//   - protected mode: listening beyond the loopback without a password is
//     refused at start unless --protected-mode no.
//
// Thread-safety: an Auth is immutable after construction; admit() may run
// on any thread, each call with its own connection's state.
#pragma once

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
  // or AUTH's own: OK, WRONGPASS, an error) is appended to `out` and AUTH
  // updates `*authenticated`.
  bool admit(std::span<const std::string_view> args, bool* authenticated, std::string* out) const;

  // The parser limits for a connection in that state: `limits` once
  // authenticated, or when no password is required; small ones before.
  resp::Limits limits(const resp::Limits& limits, bool authenticated) const;

 private:
  std::string password_;
};

// The password in `path`: its first line, without the line end. Errors name
// the file; an empty password is refused.
[[nodiscard]] Result<std::string> read_password_file(const std::string& path);

// Ok, or kInvalidArgument explaining why `bind` may not be served: it is not
// a loopback address, no password is set and protected mode is on.
[[nodiscard]] Status check_protected_mode(const std::string& bind, bool password_set, bool protected_mode);

}  // namespace commitlog::kv
