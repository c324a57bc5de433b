// SPDX-License-Identifier: Apache-2.0
// A filled write (File::write_filled_at) to a file opened for direct I/O,
// with Linux's asynchronous I/O: each piece is submitted (io_submit) as soon
// as it is filled, so the device writes it while the caller fills the next.
//
// Thread-safety: each thread submits on an AIO context of its own, made on
// its first call and destroyed when it ends.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>

#include "commitlog/status.h"

namespace commitlog {

// As File::write_filled_at on `fd` (named `path` in errors). nullopt,
// with nothing filled or written, when the kernel gives this thread no AIO
// context (none built in, or fs.aio-max-nr reached): the caller then writes
// another way.
std::optional<Status> write_filled_async(int fd, const std::string& path, uint64_t offset,
                                         std::span<const std::byte> data, size_t piece,
                                         const std::function<bool(size_t end)>& fill);

}  // namespace commitlog
