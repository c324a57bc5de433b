// SPDX-License-Identifier: Apache-2.0
#include "commitlog/status.h"

#include <cerrno>
#include <cstring>

namespace commitlog {

const char* error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::kOk: return "ok";
    case ErrorCode::kIoError: return "I/O error";
    case ErrorCode::kNoSpace: return "no space";
    case ErrorCode::kCorruption: return "corruption";
    case ErrorCode::kInvalidArgument: return "invalid argument";
    case ErrorCode::kNotFound: return "not found";
    case ErrorCode::kNotSupported: return "not supported";
    case ErrorCode::kClosed: return "closed";
    case ErrorCode::kTimedOut: return "timed out";
    case ErrorCode::kBusy: return "busy";
  }
  return "unknown";
}

Status Status::from_errno(int err, const std::string& what) {
  std::string message = what + ": " + std::strerror(err);
  if (err == ENOSPC) return no_space(std::move(message));
  if (err == ENOENT) return not_found(std::move(message));
  return io_error(std::move(message));
}

std::string Status::to_string() const {
  if (ok()) return "ok";
  return std::string(error_code_name(code_)) + ": " + message_;
}

}  // namespace commitlog
