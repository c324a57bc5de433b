// SPDX-License-Identifier: Apache-2.0
// commitlog-kv (build/bin/commitlog-kv) as a child process, and a tiny
// blocking RESP client, for the tests that drive the server over a loopback
// socket. Failures inside are doctest REQUIREs of the calling test.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace commitlog::testing {

std::string kv_binary();

class KvServer {
 public:
  // Starts commitlog-kv on a free port with `dir` and `flags`, its stdout
  // and stderr going to the file `out`, and waits until it listens.
  KvServer(const std::string& dir, std::vector<std::string> flags, const std::string& out);
  ~KvServer();  // kill -9, if still running
  KvServer(const KvServer&) = delete;
  KvServer& operator=(const KvServer&) = delete;

  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  std::string output() const;
  bool alive() const;
  void kill9();
  // SIGTERM: a last snapshot and a clean close. Returns the wait status.
  int stop();

 private:
  std::string out_;
  pid_t pid_ = -1;
  int port_ = 0;
};

struct Reply {
  char type = 0;  // + - : $ *, or 0 when the connection closed or timed out
  std::string text;
  int64_t integer = 0;
  bool nil = false;
  std::vector<Reply> elements;
};

class Client {
 public:
  // Connects to 127.0.0.1:`port`; replies wait at most `timeout_s`.
  explicit Client(int port, int timeout_s = 10);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // False when the server is gone.
  bool send(std::string_view bytes);
  static std::string encode(const std::vector<std::string>& args);
  Reply command(const std::vector<std::string>& args);
  Reply read_reply();
  // True when the server closed the connection (recv sees the end or a
  // reset), waiting up to the timeout for it.
  bool closed_by_server();
  // Closes with a TCP reset instead of a FIN.
  void reset();
  int fd() const { return fd_; }

 private:
  bool fill();
  bool read_line(std::string* line);
  bool read_exact(size_t n, std::string* out);

  int fd_ = -1;
  std::string buffered_;
};

// INFO `section` as key -> value.
std::map<std::string, std::string> info(Client& c, const std::string& section);

}  // namespace commitlog::testing
