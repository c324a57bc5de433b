// SPDX-License-Identifier: Apache-2.0
#include "tests/support/kv_process.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <thread>

#include <doctest/doctest.h>
#include <fmt/core.h>

#include "tests/support/child_process.h"

namespace commitlog::testing {
using namespace std::chrono_literals;

std::string kv_binary() {
  const std::string cli = COMMITLOG_CLI;
  return cli.substr(0, cli.rfind('/') + 1) + "commitlog-kv";
}

KvServer::KvServer(const std::string& dir, std::vector<std::string> flags, const std::string& out)
    : out_(out) {
  REQUIRE_MESSAGE(std::filesystem::exists(kv_binary()), kv_binary() << " is not built");
  std::vector<std::string> args = {kv_binary(), "--dir", dir, "--port", "0"};
  args.insert(args.end(), flags.begin(), flags.end());
  pid_ = spawn(args, ChildOutput{ChildOutput::Kind::kTruncate, out});
  REQUIRE_MESSAGE(pid_ > 0, "could not start " << args[0]);
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (std::chrono::steady_clock::now() < deadline) {
    const std::string text = read_text_file(out_);
    const size_t at = text.find("listening on ");
    const size_t colon = at == std::string::npos ? at : text.find(':', at);
    if (colon != std::string::npos && text.find('\n', colon) != std::string::npos) {
      port_ = std::stoi(text.substr(colon + 1));
      return;
    }
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      FAIL("commitlog-kv exited at start:\n" << text);
    }
    std::this_thread::sleep_for(10ms);
  }
  FAIL("commitlog-kv did not listen within 10 s:\n" << read_text_file(out_));
}

KvServer::~KvServer() {
  if (pid_ > 0) kill9();
}

std::string KvServer::output() const { return read_text_file(out_); }

bool KvServer::alive() const {
  int status = 0;
  return pid_ > 0 && ::waitpid(pid_, &status, WNOHANG) == 0;
}

void KvServer::kill9() {
  REQUIRE(::kill(pid_, SIGKILL) == 0);
  int status = 0;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
}

int KvServer::stop() {
  REQUIRE(::kill(pid_, SIGTERM) == 0);
  int status = 0;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
  return status;
}

Client::Client(int port, int timeout_s) {
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(fd_ >= 0);
  timeval timeout{timeout_s, 0};
  ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  const int one = 1;
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE_MESSAGE(::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0,
                  "connect: " << std::strerror(errno));
}

Client::~Client() {
  if (fd_ >= 0) ::close(fd_);
}

bool Client::send(std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

std::string Client::encode(const std::vector<std::string>& args) {
  std::string out = fmt::format("*{}\r\n", args.size());
  for (const std::string& a : args) out += fmt::format("${}\r\n{}\r\n", a.size(), a);
  return out;
}

Reply Client::command(const std::vector<std::string>& args) {
  if (!send(encode(args))) return {};
  return read_reply();
}

Reply Client::read_reply() {
  std::string line;
  if (!read_line(&line) || line.empty()) return {};
  Reply r;
  r.type = line[0];
  const std::string rest = line.substr(1);
  switch (r.type) {
    case '+':
    case '-': r.text = rest; break;
    case ':': r.integer = std::stoll(rest); break;
    case '$': {
      const int64_t n = std::stoll(rest);
      if (n < 0) {
        r.nil = true;
        break;
      }
      if (!read_exact(static_cast<size_t>(n) + 2, &r.text)) return {};
      r.text.resize(static_cast<size_t>(n));
      break;
    }
    case '*': {
      const int64_t n = std::stoll(rest);
      for (int64_t i = 0; i < n; ++i) r.elements.push_back(read_reply());
      break;
    }
    default: return {};
  }
  return r;
}

bool Client::closed_by_server() {
  if (!buffered_.empty()) return false;
  char c;
  const ssize_t n = ::recv(fd_, &c, 1, 0);
  return n == 0 || (n < 0 && errno == ECONNRESET);
}

void Client::reset() {
  linger l{1, 0};
  ::setsockopt(fd_, SOL_SOCKET, SO_LINGER, &l, sizeof l);
  ::close(fd_);
  fd_ = -1;
}

bool Client::fill() {
  char chunk[65536];
  const ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
  if (n <= 0) return false;
  buffered_.append(chunk, static_cast<size_t>(n));
  return true;
}

bool Client::read_line(std::string* line) {
  size_t end;
  while ((end = buffered_.find("\r\n")) == std::string::npos) {
    if (!fill()) return false;
  }
  *line = buffered_.substr(0, end);
  buffered_.erase(0, end + 2);
  return true;
}

bool Client::read_exact(size_t n, std::string* out) {
  while (buffered_.size() < n) {
    if (!fill()) return false;
  }
  *out = buffered_.substr(0, n);
  buffered_.erase(0, n);
  return true;
}

std::map<std::string, std::string> info(Client& c, const std::string& section) {
  const Reply r = c.command({"INFO", section});
  std::map<std::string, std::string> fields;
  std::istringstream lines(r.text);
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const size_t colon = line.find(':');
    if (colon != std::string::npos && line[0] != '#')
      fields[line.substr(0, colon)] = line.substr(colon + 1);
  }
  return fields;
}

}  // namespace commitlog::testing
