// SPDX-License-Identifier: Apache-2.0
#include "tools/kv/listener.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include <boost/fiber/all.hpp>
#include <fmt/core.h>

#include "tools/kv/fiber_io.h"

namespace commitlog::kv {
namespace {

constexpr size_t kConnectionStack = 256u << 10;
constexpr std::string_view kTooManyClients = "-ERR max number of clients reached\r\n";

}  // namespace

Listener::~Listener() {
  if (fd_ >= 0) ::close(fd_);
}

Status Listener::open(const std::string& bind, int port) {
  sockaddr_storage address{};
  socklen_t length = 0;
  if (bind.find(':') != std::string::npos) {
    auto* a6 = reinterpret_cast<sockaddr_in6*>(&address);
    a6->sin6_family = AF_INET6;
    a6->sin6_port = htons(static_cast<uint16_t>(port));
    if (::inet_pton(AF_INET6, bind.c_str(), &a6->sin6_addr) != 1) {
      return Status::invalid_argument("--bind: '" + bind + "' is not an IP address");
    }
    length = sizeof(sockaddr_in6);
  } else {
    auto* a4 = reinterpret_cast<sockaddr_in*>(&address);
    a4->sin_family = AF_INET;
    a4->sin_port = htons(static_cast<uint16_t>(port));
    if (::inet_pton(AF_INET, bind.c_str(), &a4->sin_addr) != 1) {
      return Status::invalid_argument("--bind: '" + bind + "' is not an IP address");
    }
    length = sizeof(sockaddr_in);
  }
  fd_ = ::socket(address.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd_ < 0) return Status::from_errno(errno, "socket");
  const int one = 1;
  ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  const std::string where = bind + ":" + std::to_string(port);
  if (::bind(fd_, reinterpret_cast<sockaddr*>(&address), length) != 0) {
    return Status::from_errno(errno, "bind " + where);
  }
  if (::listen(fd_, 1024) != 0) return Status::from_errno(errno, "listen " + where);
  length = sizeof address;
  if (::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    return Status::from_errno(errno, "getsockname");
  }
  port_ = ntohs(address.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&address)->sin6_port
                                              : reinterpret_cast<sockaddr_in*>(&address)->sin_port);
  return {};
}

void Listener::accept_loop(ClientRegistry& clients, const ConnectionEnv& env, Worker& worker) {
  Socket listener(worker.scheduler, fd_, /*owned=*/false);
  if (!listener.status().ok()) {
    fmt::print(stderr, "commitlog-kv: {}\n", listener.status().to_string());
    return;
  }
  while (true) {
    auto fd = listener.accept();
    if (!accepting_.load()) return;
    if (!fd.ok()) {
      // Out of descriptors or memory: let the connections finish, then retry.
      fmt::print(stderr, "commitlog-kv: {}\n", fd.status().to_string());
      boost::this_fiber::sleep_for(std::chrono::milliseconds(50));
      continue;
    }
    auto client = clients.admit(*fd);
    if (client == nullptr) {
      // A fresh socket has room for this line; if not, the close says enough.
      [[maybe_unused]] const ssize_t sent =
          ::send(*fd, kTooManyClients.data(), kTooManyClients.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      ::close(*fd);
    } else {
      const int one = 1;
      ::setsockopt(*fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      boost::fibers::fiber(std::allocator_arg,
                           boost::fibers::protected_fixedsize_stack(kConnectionStack),
                           [&env, &worker, fd = *fd, client = std::move(client)]() mutable {
                             serve_connection(fd, std::move(client), env, worker);
                           })
          .detach();
    }
    yield_for_io(worker.scheduler);
  }
}

void Listener::stop() {
  accepting_.store(false);
  ::shutdown(fd_, SHUT_RDWR);
}

}  // namespace commitlog::kv
