// SPDX-License-Identifier: Apache-2.0
#include "commitlog/util/report.h"

#include <cstdio>

namespace commitlog {

void report(std::string_view line) {
  std::fprintf(stderr, "commitlog: %.*s\n", static_cast<int>(line.size()), line.data());
}

}  // namespace commitlog
