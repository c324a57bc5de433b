// SPDX-License-Identifier: Apache-2.0
// Public API. Status and Result: the error values of the whole library.
//
// Every fallible call returns one of these; exceptions never cross a library
// boundary. A Status is cheap to copy when ok (no allocation). Swallowing an
// error must be explicit: `status.ignore()` is the one greppable way to do it.
#pragma once

// One clear message instead of a page of errors from C++20 library features.
#if __cplusplus < 202002L
#error "commitlog needs C++20: compile with -std=c++20 or later"
#else

#include <cassert>
#include <string>
#include <utility>
#include <variant>

#include "commitlog/export.h"

namespace commitlog {

enum class ErrorCode {
  kOk = 0,
  kIoError,          // a system call failed (errno in the message)
  kNoSpace,          // ENOSPC from the file system
  kCorruption,       // bytes on disk are not what was written
  kInvalidArgument,  // the caller passed something unusable
  kNotFound,         // a file or directory does not exist
  kNotSupported,     // a format version or feature this build cannot read
  kClosed,           // the log is closed or stopped after a failure
  kTimedOut,         // an append with a deadline gave up
  kBusy,             // another owner holds it: a log directory open elsewhere
};

COMMITLOG_EXPORT const char* error_code_name(ErrorCode code);

class [[nodiscard]] COMMITLOG_EXPORT Status {
 public:
  Status() = default;
  Status(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok_status() { return {}; }
  static Status io_error(std::string m) { return {ErrorCode::kIoError, std::move(m)}; }
  static Status no_space(std::string m) { return {ErrorCode::kNoSpace, std::move(m)}; }
  static Status corruption(std::string m) { return {ErrorCode::kCorruption, std::move(m)}; }
  static Status invalid_argument(std::string m) { return {ErrorCode::kInvalidArgument, std::move(m)}; }
  static Status not_found(std::string m) { return {ErrorCode::kNotFound, std::move(m)}; }
  static Status not_supported(std::string m) { return {ErrorCode::kNotSupported, std::move(m)}; }
  static Status closed(std::string m) { return {ErrorCode::kClosed, std::move(m)}; }
  static Status timed_out(std::string m) { return {ErrorCode::kTimedOut, std::move(m)}; }
  static Status busy(std::string m) { return {ErrorCode::kBusy, std::move(m)}; }
  // An I/O error from a failed system call: kNoSpace for ENOSPC, else kIoError.
  static Status from_errno(int err, const std::string& what);

  bool ok() const { return code_ == ErrorCode::kOk; }
  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "<code name>: <message>", or "ok".
  std::string to_string() const;
  // Explicitly drops an error the caller has decided not to act on.
  void ignore() const {}

 private:
  ErrorCode code_ = ErrorCode::kOk;
  std::string message_;
};

// A value or an error. `value()` requires ok().
template <typename T>
class [[nodiscard]] COMMITLOG_EXPORT Result {
 public:
  Result(T value) : state_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  // An ok `status` has no value to give: the Result then holds
  // kInvalidArgument saying so, rather than claim success without a value.
  Result(Status status)  // NOLINT(google-explicit-constructor)
      : state_(status.ok() ? Status::invalid_argument("a Result was made from an ok Status, with no value")
                           : std::move(status)) {}

  bool ok() const { return std::holds_alternative<T>(state_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(state_);
  }
  T& value() & { return std::get<T>(state_); }
  const T& value() const& { return std::get<T>(state_); }
  T&& value() && { return std::get<T>(std::move(state_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }

 private:
  std::variant<T, Status> state_;
};

}  // namespace commitlog

// Returns early from the enclosing function when `expr` is an error.
#define CL_RETURN_IF_ERROR(expr)              \
  do {                                        \
    ::commitlog::Status cl_status_ = (expr);  \
    if (!cl_status_.ok()) return cl_status_;  \
  } while (0)

#endif  // C++20
