// SPDX-License-Identifier: Apache-2.0
// Clang's thread-safety analysis (-Wthread-safety, an error in the clang
// builds): who may touch what is written once, beside the member, and the
// compiler checks every access. Other compilers ignore the attributes.
#pragma once

#if defined(__clang__)
#define CL_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define CL_THREAD_ANNOTATION(x)
#endif

#define CAPABILITY(x) CL_THREAD_ANNOTATION(capability(x))
#define SCOPED_CAPABILITY CL_THREAD_ANNOTATION(scoped_lockable)
#define GUARDED_BY(x) CL_THREAD_ANNOTATION(guarded_by(x))
#define REQUIRES(...) CL_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define EXCLUDES(...) CL_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
#define ACQUIRE(...) CL_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define RELEASE(...) CL_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define TRY_ACQUIRE(...) CL_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
