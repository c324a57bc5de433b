// SPDX-License-Identifier: Apache-2.0
// FaultFileSystem's power loss: pulling the plug and what a reboot finds.
#include <algorithm>
#include <cstring>
#include <random>

#include "tests/support/fault_file_system.h"
#include "tests/support/fault_node.h"

namespace commitlog::testing {
namespace {

constexpr uint64_t kSectorSize = 512;

}  // namespace

const char* crash_mode_name(CrashMode mode) {
  switch (mode) {
    case CrashMode::kDrop: return "drop";
    case CrashMode::kZero: return "zero";
    case CrashMode::kTear: return "tear";
    case CrashMode::kOldContents: return "old-contents";
    case CrashMode::kRandom: return "random";
  }
  return "unknown";
}

void FaultFileSystem::pull_plug() {
  std::lock_guard lock(mu_);
  plug_pulled_ = true;
}

bool FaultFileSystem::plug_pulled() const {
  std::lock_guard lock(mu_);
  return plug_pulled_;
}

std::unique_ptr<FaultFileSystem> FaultFileSystem::crash(CrashMode mode, uint64_t seed) {
  std::lock_guard lock(mu_);
  std::mt19937_64 rng(seed);
  auto crashed_image = [&](const Node& node) {
    CrashMode m = mode;
    if (m == CrashMode::kRandom) {
      constexpr CrashMode kModes[] = {CrashMode::kDrop, CrashMode::kZero, CrashMode::kTear,
                                      CrashMode::kOldContents};
      m = kModes[rng() % 4];
    }
    const std::vector<std::byte>& now = node.data;
    const std::vector<std::byte>& old = node.durable;
    size_t size = now.size();
    if (m == CrashMode::kDrop || (m == CrashMode::kTear && rng() % 4 == 0)) size = old.size();
    std::vector<std::byte> image(size);
    std::copy_n(old.begin(), std::min(size, old.size()), image.begin());
    if (m == CrashMode::kDrop || m == CrashMode::kOldContents) return image;
    // image holds the old contents; now decide sector by sector where the
    // new contents differ.
    const size_t compared = std::min(size, now.size());
    for (size_t sector = 0; sector < compared; sector += kSectorSize) {
      const size_t end = std::min(sector + kSectorSize, compared);
      if (std::memcmp(image.data() + sector, now.data() + sector, end - sector) == 0) continue;
      if (m == CrashMode::kTear) {
        if (rng() % 2 == 0) std::memcpy(image.data() + sector, now.data() + sector, end - sector);
      } else {  // kZero
        for (size_t i = sector; i < end; ++i) {
          if (image[i] != now[i]) image[i] = std::byte{0};
        }
      }
    }
    return image;
  };

  auto out = std::make_unique<FaultFileSystem>();
  out->dirs_ = dirs_;
  out->direct_io_block_size_ = direct_io_block_size_;
  std::map<const Node*, std::shared_ptr<Node>> images;  // a node under two names stays one
  for (const auto& [path, node] : durable_) {  // in path order, so the seed decides alone
    std::shared_ptr<Node>& image = images[node.get()];
    if (!image) {
      image = std::make_shared<Node>();
      image->data = crashed_image(*node);
      image->durable = image->data;
    }
    out->files_[path] = image;
    out->durable_[path] = image;
  }
  return out;
}

}  // namespace commitlog::testing
