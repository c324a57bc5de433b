// SPDX-License-Identifier: Apache-2.0
// Whether this build runs under a sanitizer, for the few tests whose bounds
// (resident memory, how much work fits in a test's time) a sanitizer changes;
// and a ThreadSanitizer scope for the one copy the fault file system makes
// of bytes that other threads store into without any order.
#pragma once

#if defined(__SANITIZE_ADDRESS__)
#define COMMITLOG_TESTING_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define COMMITLOG_TESTING_ASAN 1
#endif
#endif

#if defined(__SANITIZE_THREAD__)
#define COMMITLOG_TESTING_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define COMMITLOG_TESTING_TSAN 1
#endif
#endif

#if defined(COMMITLOG_TESTING_TSAN)
extern "C" void AnnotateIgnoreReadsBegin(const char* file, int line);
extern "C" void AnnotateIgnoreReadsEnd(const char* file, int line);
#endif

namespace commitlog::testing {

#if defined(COMMITLOG_TESTING_ASAN)
inline constexpr bool kAddressSanitizer = true;
#else
inline constexpr bool kAddressSanitizer = false;
#endif
#if defined(COMMITLOG_TESTING_TSAN)
inline constexpr bool kThreadSanitizer = true;
#else
inline constexpr bool kThreadSanitizer = false;
#endif
inline constexpr bool kSanitizer = kAddressSanitizer || kThreadSanitizer;

// While one lives, ThreadSanitizer neither checks nor records this thread's
// memory accesses (reads and writes alike, despite the annotation's name).
// Only for a copy whose race is the behaviour being modelled; keep the scope
// to that copy, since a race inside it is invisible.
class UncheckedAccessScope {
 public:
#if defined(COMMITLOG_TESTING_TSAN)
  UncheckedAccessScope() { AnnotateIgnoreReadsBegin(__FILE__, __LINE__); }
  ~UncheckedAccessScope() { AnnotateIgnoreReadsEnd(__FILE__, __LINE__); }
#else
  UncheckedAccessScope() {}   // user-provided, so a scope is never an "unused variable"
  ~UncheckedAccessScope() {}
#endif
  UncheckedAccessScope(const UncheckedAccessScope&) = delete;
  UncheckedAccessScope& operator=(const UncheckedAccessScope&) = delete;
};

}  // namespace commitlog::testing
