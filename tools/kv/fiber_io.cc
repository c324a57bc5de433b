// SPDX-License-Identifier: Apache-2.0
#include "tools/kv/fiber_io.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>

#include <boost/fiber/context.hpp>
#include <boost/fiber/operations.hpp>

namespace commitlog::kv {

EpollScheduler& EpollScheduler::install() {
  EpollScheduler* installed = nullptr;
  boost::fibers::use_scheduling_algorithm<EpollScheduler>(installed);
  return *installed;
}

EpollScheduler::EpollScheduler(EpollScheduler*& installed) {
  installed = this;
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  event_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.ptr = nullptr;  // the eventfd
  if (epoll_fd_ >= 0 && event_fd_ >= 0) ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, event_fd_, &event);
}

EpollScheduler::~EpollScheduler() {
  if (event_fd_ >= 0) ::close(event_fd_);
  if (epoll_fd_ >= 0) ::close(epoll_fd_);
}

Status EpollScheduler::add(int fd, IoWaiter* waiter) {
  if (epoll_fd_ < 0 || event_fd_ < 0)
    return Status::io_error("epoll or eventfd could not be created");
  epoll_event event{};
  event.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
  event.data.ptr = waiter;
  if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &event) != 0)
    return Status::from_errno(errno, "epoll_ctl add");
  return {};
}

void EpollScheduler::remove(int fd) {
  epoll_event unused{};
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, &unused);
}

void EpollScheduler::poll(std::chrono::nanoseconds timeout) {
  epoll_event events[128];
  timespec limit{};
  if (timeout.count() > 0) {
    limit.tv_sec = static_cast<time_t>(timeout.count() / 1'000'000'000);
    limit.tv_nsec = static_cast<long>(timeout.count() % 1'000'000'000);
  }
  const int n =
      ::epoll_pwait2(epoll_fd_, events, 128, timeout.count() < 0 ? nullptr : &limit, nullptr);
  for (int i = 0; i < n; ++i) {
    auto* waiter = static_cast<IoWaiter*>(events[i].data.ptr);
    if (waiter == nullptr) {
      uint64_t count = 0;
      [[maybe_unused]] const ssize_t drained = ::read(event_fd_, &count, sizeof count);
      continue;
    }
    const uint32_t e = events[i].events;
    if ((e & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) != 0) waiter->readable = true;
    if ((e & (EPOLLOUT | EPOLLHUP | EPOLLERR)) != 0) waiter->writable = true;
    waiter->cv.notify_all();
  }
}

void EpollScheduler::awakened(boost::fibers::context* ctx) noexcept { ctx->ready_link(ready_); }

boost::fibers::context* EpollScheduler::pick_next() noexcept {
  if (ready_.empty()) return nullptr;
  boost::fibers::context* ctx = &ready_.front();
  ready_.pop_front();
  return ctx;
}

bool EpollScheduler::has_ready_fibers() const noexcept { return !ready_.empty(); }

void EpollScheduler::suspend_until(const std::chrono::steady_clock::time_point& deadline) noexcept {
  if (before_sleep_ && before_sleep_()) return;
  sleep(deadline == std::chrono::steady_clock::time_point::max()
            ? std::chrono::nanoseconds(-1)
            : std::max(std::chrono::nanoseconds(0), deadline - std::chrono::steady_clock::now()));
}

void EpollScheduler::sleep(std::chrono::nanoseconds timeout) {
  // notify() stores notified_ first and reads sleeping_ second; this thread
  // stores sleeping_ first and reads notified_ second: either it sees the
  // remote wake-up here, or the notifier sees it sleeping and writes the eventfd.
  sleeping_.store(true);
  if (notified_.exchange(false)) timeout = std::chrono::nanoseconds(0);
  poll(timeout);
  sleeping_.store(false);
}

void EpollScheduler::notify() noexcept {
  notified_.store(true);
  if (sleeping_.load()) {
    const uint64_t one = 1;
    [[maybe_unused]] const ssize_t written = ::write(event_fd_, &one, sizeof one);
  }
}

void yield_for_io(EpollScheduler& scheduler) {
  scheduler.poll(std::chrono::nanoseconds(0));
  boost::this_fiber::yield();
}

Socket::Socket(EpollScheduler& scheduler, int fd, bool owned)
    : scheduler_(scheduler), fd_(fd), owned_(owned) {
  status_ = scheduler_.add(fd_, &waiter_);
}

Socket::~Socket() {
  if (status_.ok()) scheduler_.remove(fd_);
  if (owned_) ::close(fd_);
}

void Socket::wait(bool for_write) {
  NoLock lock;
  bool& ready = for_write ? waiter_.writable : waiter_.readable;
  while (!ready) waiter_.cv.wait(lock);
}

Result<size_t> Socket::read_some(std::span<char> buffer) {
  if (!status_.ok()) return status_;
  bool waited = false;
  // After a short read the socket was empty; data arriving since is a new
  // edge, so wait for it rather than try a recv that would say EAGAIN.
  if (drained_ && !waiter_.readable) {
    wait(false);
    waited = true;
  }
  while (true) {
    waiter_.readable = false;
    const ssize_t n = ::recv(fd_, buffer.data(), buffer.size(), 0);
    if (n >= 0) {
      reads_without_wait_ = waited ? 0 : reads_without_wait_ + 1;
      drained_ = n > 0 && static_cast<size_t>(n) < buffer.size();
      return static_cast<size_t>(n);
    }
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      wait(false);
      waited = true;
    } else if (errno != EINTR) {
      return Status::from_errno(errno, "recv");
    }
  }
}

Status Socket::write_all(std::span<const char> data) {
  if (!status_.ok()) return status_;
  while (!data.empty()) {
    waiter_.writable = false;
    const ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
    if (n >= 0) {
      data = data.subspan(static_cast<size_t>(n));
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      wait(true);
    } else if (errno != EINTR) {
      return Status::from_errno(errno, "send");
    }
  }
  return {};
}

Result<int> Socket::accept() {
  if (!status_.ok()) return status_;
  while (true) {
    waiter_.readable = false;
    const int fd = ::accept4(fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd >= 0) return fd;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      wait(false);
    } else if (errno != EINTR && errno != ECONNABORTED) {
      return Status::from_errno(errno, "accept");
    }
  }
}

}  // namespace commitlog::kv
