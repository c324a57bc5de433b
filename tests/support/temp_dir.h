// SPDX-License-Identifier: Apache-2.0
// A fresh directory under /tmp for one test, removed with its contents when
// the object goes out of scope.
#pragma once

#include <string>

namespace commitlog::testing {

class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace commitlog::testing
