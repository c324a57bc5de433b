// SPDX-License-Identifier: Apache-2.0
// FaultFileSystem's held calls: a test keeps a sync in flight.
#include "tests/support/fault_file_system.h"

#include <doctest/doctest.h>

namespace commitlog::testing {

void FaultFileSystem::hold(Op op) {
  std::lock_guard lock(hold_mu_);
  held_[static_cast<size_t>(op)] = true;
}

void FaultFileSystem::release(Op op) {
  {
    std::lock_guard lock(hold_mu_);
    held_[static_cast<size_t>(op)] = false;
  }
  hold_cv_.notify_all();
}

bool FaultFileSystem::await_held(Op op, size_t calls, std::chrono::seconds limit) const {
  std::unique_lock lock(hold_mu_);
  return hold_cv_.wait_for(lock, limit,
                           [&] { return holding_[static_cast<size_t>(op)] >= calls; });
}

void FaultFileSystem::wait_while_held(Op op) {
  const auto i = static_cast<size_t>(op);
  std::unique_lock lock(hold_mu_);
  if (!held_[i]) return;
  ++holding_[i];
  hold_cv_.notify_all();
  if (!hold_cv_.wait_for(lock, kHoldLimit, [&] { return !held_[i]; })) {
    held_[i] = false;
    FAIL_CHECK("a held " << std::string(op_name(op)) << " call was never released");
  }
  --holding_[i];
}

}  // namespace commitlog::testing
