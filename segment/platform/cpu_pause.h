// SPDX-License-Identifier: Apache-2.0
// The CPU's hint that the caller is spinning on a value another core will
// change (x86 pause, Arm yield): it saves power and lets a sibling
// hyperthread run. A no-op elsewhere.
#pragma once

namespace commitlog {

inline void cpu_pause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

}  // namespace commitlog
