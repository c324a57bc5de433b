// SPDX-License-Identifier: Apache-2.0
#include "tools/kv/client_limits.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <string>

#include "commitlog/util/thread_name.h"

namespace commitlog::kv {

struct ClientRegistry::Client {
  int fd = -1;
  uint64_t id = 0;
  std::string addr, laddr;
  std::chrono::steady_clock::time_point connected_at;
  size_t index = 0;        // in clients_; guarded by mu_
  uint64_t memory = 0;     // guarded by mu_
  bool disconnected = false;  // guarded by mu_
  std::atomic<uint64_t> activity{0};
  std::atomic<int64_t> active_at_ns{0};  // the last touch, on the steady clock
  mutable std::mutex shown_mu;           // guards name and cmd
  std::string name;
  std::string cmd = "NULL";
  // The reaper's last look (guarded by mu_): the activity it saw, and since when.
  uint64_t seen_activity = 0;
  std::chrono::steady_clock::time_point seen_at;
};

namespace {

int64_t steady_ns(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

// A socket address as Redis prints it: "ip:port", "[ip]:port" for IPv6.
std::string address_of(int fd, bool peer) {
  sockaddr_storage address{};
  socklen_t length = sizeof address;
  auto* sa = reinterpret_cast<sockaddr*>(&address);
  if ((peer ? ::getpeername(fd, sa, &length) : ::getsockname(fd, sa, &length)) != 0) return "?:0";
  char ip[INET6_ADDRSTRLEN] = "?";
  if (address.ss_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&address);
    ::inet_ntop(AF_INET6, &in6->sin6_addr, ip, sizeof ip);
    return "[" + std::string(ip) + "]:" + std::to_string(ntohs(in6->sin6_port));
  }
  const auto* in = reinterpret_cast<const sockaddr_in*>(&address);
  ::inet_ntop(AF_INET, &in->sin_addr, ip, sizeof ip);
  return std::string(ip) + ":" + std::to_string(ntohs(in->sin_port));
}

}  // namespace

uint64_t fit_open_files(uint64_t max_clients) {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return max_clients;
  const rlim_t wanted = static_cast<rlim_t>(max_clients + kReservedFiles);
  if (limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < wanted) {
    rlimit raised = limit;
    raised.rlim_cur = limit.rlim_max == RLIM_INFINITY ? wanted : std::min(wanted, limit.rlim_max);
    if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) limit = raised;
  }
  if (limit.rlim_cur == RLIM_INFINITY || limit.rlim_cur >= wanted) return max_clients;
  return limit.rlim_cur > kReservedFiles ? static_cast<uint64_t>(limit.rlim_cur) - kReservedFiles : 1;
}

Result<uint64_t> parse_memory_size(std::string_view text) {
  uint64_t count = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), count);
  std::string unit(end, text.data() + text.size());
  std::transform(unit.begin(), unit.end(), unit.begin(), [](unsigned char c) { return std::tolower(c); });
  struct Unit {
    std::string_view name;
    uint64_t bytes;
  };
  constexpr Unit kUnits[] = {{"", 1},           {"b", 1},           {"k", 1000},
                             {"kb", 1u << 10},  {"m", 1000 * 1000}, {"mb", 1u << 20},
                             {"g", 1000 * 1000 * 1000}, {"gb", 1u << 30}};
  if (ec == std::errc() && end != text.data()) {
    for (const Unit& u : kUnits) {
      if (unit == u.name && count <= UINT64_MAX / u.bytes) return count * u.bytes;
    }
  }
  return Status::invalid_argument("'" + std::string(text) +
                                  "' is not a memory size (e.g. 0, 100mb, 1gb)");
}

ClientRegistry::ClientRegistry(ClientLimits limits) : limits_(limits) {
  if (limits_.idle_timeout.count() > 0) {
    reaper_ = std::thread([this] {
      name_this_thread("kv-idle");
      reap_idle();
    });
  }
}

ClientRegistry::~ClientRegistry() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (reaper_.joinable()) reaper_.join();
}

std::unique_ptr<ClientRegistry::Handle> ClientRegistry::admit(int fd) {
  auto client = std::make_unique<Client>();
  client->fd = fd;
  client->seen_at = client->connected_at = std::chrono::steady_clock::now();
  client->active_at_ns.store(steady_ns(client->connected_at), std::memory_order_relaxed);
  client->addr = address_of(fd, /*peer=*/true);
  client->laddr = address_of(fd, /*peer=*/false);
  std::lock_guard lock(mu_);
  if (clients_.size() >= limits_.max_clients) {
    rejected_.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  client->id = next_id_++;
  client->index = clients_.size();
  clients_.push_back(client.get());
  return std::unique_ptr<Handle>(new Handle(*this, std::move(client)));
}

uint64_t ClientRegistry::connected() const {
  std::lock_guard lock(mu_);
  return clients_.size();
}

ClientView ClientRegistry::view_locked(const Client& client, std::chrono::steady_clock::time_point now) {
  ClientView v;
  v.id = client.id;
  v.addr = client.addr;
  v.laddr = client.laddr;
  v.fd = client.fd;
  v.age_s = std::chrono::duration_cast<std::chrono::seconds>(now - client.connected_at).count();
  v.idle_s = (steady_ns(now) - client.active_at_ns.load(std::memory_order_relaxed)) / 1'000'000'000;
  v.memory = client.memory;
  std::lock_guard lock(client.shown_mu);
  v.name = client.name;
  v.cmd = client.cmd;
  return v;
}

std::vector<ClientView> ClientRegistry::list() const {
  std::vector<ClientView> views;
  {
    const auto now = std::chrono::steady_clock::now();
    std::lock_guard lock(mu_);
    views.reserve(clients_.size());
    for (const Client* c : clients_) views.push_back(view_locked(*c, now));
  }
  std::sort(views.begin(), views.end(), [](const ClientView& a, const ClientView& b) { return a.id < b.id; });
  return views;
}

bool ClientRegistry::set_memory(Client& client, uint64_t bytes) {
  std::lock_guard lock(mu_);
  if (client.disconnected) return false;
  const uint64_t total = memory_.load(std::memory_order_relaxed) - client.memory + bytes;
  client.memory = bytes;
  memory_.store(total, std::memory_order_relaxed);
  // Largest first, until the rest fit: one scan per client disconnected,
  // and only while over the bound.
  while (limits_.max_memory > 0 && memory_.load(std::memory_order_relaxed) > limits_.max_memory) {
    Client* largest = nullptr;
    for (Client* c : clients_) {
      if (!c->disconnected && (largest == nullptr || c->memory > largest->memory)) largest = c;
    }
    if (largest == nullptr) break;
    disconnect_locked(*largest);
    evicted_.fetch_add(1, std::memory_order_relaxed);
  }
  return !client.disconnected;
}

void ClientRegistry::disconnect_locked(Client& client) {
  client.disconnected = true;
  memory_.fetch_sub(client.memory, std::memory_order_relaxed);
  // Wakes the client's fiber, on its own thread, with the end of the stream.
  ::shutdown(client.fd, SHUT_RDWR);
}

void ClientRegistry::remove(Client& client) {
  std::lock_guard lock(mu_);
  if (!client.disconnected) memory_.fetch_sub(client.memory, std::memory_order_relaxed);
  Client* last = clients_.back();
  clients_[client.index] = last;
  last->index = client.index;
  clients_.pop_back();
}

void ClientRegistry::reap_idle() {
  const auto timeout = limits_.idle_timeout;
  // A tenth of the timeout: a client is closed at most 10% late.
  const auto tick = std::clamp<std::chrono::milliseconds>(timeout / 10, std::chrono::milliseconds(10),
                                                          std::chrono::milliseconds(1000));
  std::unique_lock lock(mu_);
  while (!stop_cv_.wait_for(lock, tick, [this] { return stopping_; })) {
    const auto now = std::chrono::steady_clock::now();
    for (Client* c : clients_) {
      const uint64_t activity = c->activity.load(std::memory_order_relaxed);
      if (c->disconnected) continue;
      if (activity != c->seen_activity) {
        c->seen_activity = activity;
        c->seen_at = now;
      } else if (now - c->seen_at >= timeout) {
        disconnect_locked(*c);
        timed_out_.fetch_add(1, std::memory_order_relaxed);
      }
    }
  }
}

ClientRegistry::Handle::Handle(ClientRegistry& registry, std::unique_ptr<Client> client)
    : registry_(registry), client_(std::move(client)) {}

ClientRegistry::Handle::~Handle() { registry_.remove(*client_); }

bool ClientRegistry::Handle::set_memory(uint64_t bytes) { return registry_.set_memory(*client_, bytes); }

void ClientRegistry::Handle::touch() {
  client_->activity.fetch_add(1, std::memory_order_relaxed);
  client_->active_at_ns.store(steady_ns(std::chrono::steady_clock::now()), std::memory_order_relaxed);
}

uint64_t ClientRegistry::Handle::id() const { return client_->id; }

void ClientRegistry::Handle::set_name(std::string_view name) {
  std::lock_guard lock(client_->shown_mu);
  client_->name.assign(name);
}

void ClientRegistry::Handle::set_command(std::string_view cmd) {
  std::lock_guard lock(client_->shown_mu);
  if (client_->cmd != cmd) client_->cmd.assign(cmd);
}

ClientView ClientRegistry::Handle::view() const {
  const auto now = std::chrono::steady_clock::now();
  std::lock_guard lock(registry_.mu_);
  return view_locked(*client_, now);
}

}  // namespace commitlog::kv
