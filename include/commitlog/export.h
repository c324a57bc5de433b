// SPDX-License-Identifier: Apache-2.0
// Public API. What libcommitlog.so exports. The library is compiled with
// hidden visibility, so a class or function is part of its ABI only when one
// of these headers declares it with COMMITLOG_EXPORT; the rest (the segment
// chain, the sync thread, the storage) stays internal and may change in any
// release. The tools and tests link the static archive, which holds
// everything.
#pragma once

// One clear message instead of a page of errors from C++20 library features.
#if __cplusplus < 202002L
#error "commitlog needs C++20: compile with -std=c++20 or later"
#else

#define COMMITLOG_EXPORT [[gnu::visibility("default")]]
#define COMMITLOG_HIDDEN [[gnu::visibility("hidden")]]

#endif  // C++20
