// SPDX-License-Identifier: Apache-2.0
#include "tools/lab/stress_discarder.h"

#include <unistd.h>

#include <cerrno>
#include <utility>

#include "tools/lab/stress_acks.h"
#include "tools/lab/stress_workload.h"

namespace commitlog::tools::stress {

Discarder::Discarder(CommitLog& log, int ack_fd, Discarded discarded)
    : log_(log), ack_fd_(ack_fd), discarded_(std::move(discarded)), thread_([this] { run(); }) {}

Discarder::~Discarder() { stop().ignore(); }

void Discarder::acknowledged(Position position) {
  std::lock_guard lock(mu_);
  if (seen_ && position.segment <= seen_->segment) return;
  if (seen_) {
    due_ = seen_;
    cv_.notify_one();
  }
  seen_ = position;
}

Status Discarder::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_one();
  if (thread_.joinable()) thread_.join();
  std::lock_guard lock(mu_);
  return error_;
}

uint64_t Discarder::discards() const {
  std::lock_guard lock(mu_);
  return discards_;
}

void Discarder::run() {
  for (;;) {
    Position point;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || due_.has_value(); });
      if (stopping_) return;
      point = *due_;
      due_.reset();
    }
    // Durable before the log forgets anything: a check that reads the file
    // after a kill knows every point the log may have been discarded to.
    Status status = write_all(ack_fd_, format_discard_line(point));
    if (status.ok() && ::fdatasync(ack_fd_) != 0) {
      status = Status::from_errno(errno, "fdatasync of the acks file");
    }
    for (uint32_t table = 0; status.ok() && table < kTables; ++table) {
      status = log_.discard(table, point);
    }
    {
      std::lock_guard lock(mu_);
      if (!status.ok()) {
        error_ =
            Status(status.code(), "discard up to " + point.to_string() + ": " + status.message());
        failed_.store(true);
        return;
      }
      ++discards_;
    }
    if (discarded_) discarded_(point);
  }
}

}  // namespace commitlog::tools::stress
