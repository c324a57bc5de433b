// SPDX-License-Identifier: Apache-2.0
// An in-memory FileSystem that remembers what is durable, so a test can pull
// the plug, and that fails chosen calls on demand (after RocksDB's
// utilities/fault_injection_fs.h).
//
// What is durable, and when:
//   - Each file has its current bytes and its durable bytes. write_at() and
//     stores through the mapping change the current bytes only.
//     sync_mapped(offset, length) makes [offset rounded down to 4096,
//     offset + length) durable, like msync(MS_SYNC) of those pages; sync()
//     makes the whole file durable, like fdatasync(). Both also make the
//     file's size durable. allocate() extends the file with zeros.
//   - A directory entry (a create, rename or remove) becomes durable only
//     with sync_dir() of its directory: a file created but never covered by
//     a sync_dir() vanishes in a crash. Directories themselves (create_dirs)
//     are durable at once.
//
// Direct I/O (OpenMode::kReadWriteDirect): writes and reads must be aligned
// to direct_io_block_size() (4096 unless set_direct_io_block_size() says
// otherwise), or fail with EINVAL and change nothing, as O_DIRECT does. A
// direct write lands in the current bytes like any write and is just as
// unsynced: a crash keeps it or not as CrashMode says, since the device's
// cache (and, for blocks never written, the file system's extent records)
// holds it until a sync. A torn write tears per 512-byte sector, so a torn
// direct write leaves any mix of its blocks' sectors old and new; a sector
// rewritten with the bytes it already held reads the same either way, which
// is what lets a flush rewrite the durable head of its last block. A direct
// write that fails on an injected fault has written the leading half of its
// blocks (rounded down) before failing, as a device that failed midway.
// write_at_durable() makes its own range durable (and the size it extends
// the file to) and nothing else, as RWF_DSYNC promises no more.
//
// Pulling the plug: pull_plug() is the instant of the power loss. From then
// on nothing becomes durable and every call that would change the disk fails
// with EIO, so the code under test sees a dead disk, while stores through a
// mapping still land in memory. crash() then builds a fresh file system
// holding what a reboot would find: the durable bytes, plus for every byte
// that was written but not made durable (its current value differs from its
// durable one) what CrashMode says. Bytes written after the plug was pulled
// count as unsynced too: the kernel may write back any dirty page at any time,
// so they are what a crash may leave as well.
//
// Thread-safety: every member may be called from any thread; one mutex guards
// everything but the mapped bytes, which the code under test writes without
// it (that is the point of mmap). The file system reads mapped bytes only in
// sync_mapped() (the range being synced, which the caller has finished
// writing), sync(), read_at() and crash(). So call crash() only once nothing
// writes through a mapping any more, e.g. after closing the log: first record
// what was acknowledged, then pull_plug(), then close, then crash().
#pragma once

#include <array>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "commitlog/file_system.h"

namespace commitlog::testing {

// What a power loss leaves in a byte range that was written but not made durable.
enum class CrashMode {
  kDrop,         // unsynced writes and unsynced size changes are lost: the file
                 // is cut back to its durable size and holds its durable bytes
  kZero,         // the file keeps its size; unsynced bytes read as zeros
  kTear,         // per 512-byte sector, at random, the new or the old contents;
                 // the file keeps its size (or, at random, its durable size)
  kOldContents,  // the file keeps its size; unsynced bytes hold what was there
                 // before the write (durable bytes, zeros past the durable size)
  kRandom,       // one of the above, chosen per file
};
inline constexpr std::array<CrashMode, 5> kAllCrashModes = {
    CrashMode::kDrop, CrashMode::kZero, CrashMode::kTear, CrashMode::kOldContents,
    CrashMode::kRandom};
const char* crash_mode_name(CrashMode mode);

// The calls faults can be injected into.
enum class Op {
  kOpen,        // open(), any mode
  kAllocate,    // File::allocate (fallocate)
  kMap,         // File::map (mmap)
  kWrite,       // File::write_at (pwrite)
  kSyncMapped,  // File::sync_mapped (msync)
  kSync,        // File::sync (fdatasync)
  kSyncDir,     // sync_dir (fsync of the directory)
  kRename,
  kRemove,
  kLink,
};
inline constexpr size_t kOpCount = 10;
// The system call's name, as the error messages use it ("msync", "fallocate", ...).
const char* op_name(Op op);
// The call that makes a flush durable in the default access mode: msync for
// plain segments, fdatasync for compressed ones.
inline Op flush_sync(bool lz4) { return lz4 ? Op::kSync : Op::kSyncMapped; }

// The log's directory in tests whose log lives on a FaultFileSystem.
inline constexpr char kLogDir[] = "/db/commitlog";

class FaultFileSystem final : public FileSystem {
 public:
  FaultFileSystem();
  ~FaultFileSystem() override;
  FaultFileSystem(const FaultFileSystem&) = delete;
  FaultFileSystem& operator=(const FaultFileSystem&) = delete;

  // FileSystem.
  using FileSystem::create_dirs;
  using FileSystem::open;
  Result<std::unique_ptr<File>> open(const std::string& path, OpenMode mode,
                                     uint32_t permissions) override;
  Status rename(const std::string& from, const std::string& to) override;
  Status remove(const std::string& path) override;
  Result<std::vector<std::string>> list(const std::string& dir) override;
  Status create_dirs(const std::string& dir, uint32_t permissions) override;
  Status sync_dir(const std::string& dir) override;
  bool exists(const std::string& path) override;
  bool is_directory(const std::string& path) override;
  // A second name for the same file; like a create, durable with sync_dir().
  Status link(const std::string& from, const std::string& to) override;
  Result<uint64_t> link_count(const std::string& path) override;
  // The volume's size: 1GiB unless set_volume_bytes() says otherwise.
  Result<uint64_t> volume_bytes(const std::string& dir) override;
  void set_volume_bytes(uint64_t bytes);
  // A full disk: from now on the files together may hold `bytes` (their
  // sizes; nullopt: any number, as at first). A call that would grow a file
  // past that fails with ENOSPC: allocate(), or a write past the file's end.
  // With `partial`, as ext4 does, it first grows the file as far as there is
  // room, in whole 4096-byte blocks (direct I/O blocks for a direct file),
  // and a write stores the bytes that fit. crash() returns a disk with room.
  void set_space_limit(std::optional<uint64_t> bytes, bool partial = false);
  // Locks are held in this object's memory and make no file: while one is
  // held, another lock() of its path is kBusy, and lock_holder() names this
  // process. crash() returns a file system with none held, as a reboot
  // ends every process. The lock's directory must exist.
  using FileSystem::lock;
  Result<std::unique_ptr<FileLock>> lock(const std::string& path, uint32_t permissions) override;
  Result<std::optional<int64_t>> lock_holder(const std::string& path) override;

  // Fault injection. After `after_calls` more successful calls of `op`, calls
  // of `op` fail with Status::from_errno(error, ...) (so ENOSPC is kNoSpace):
  // every one from then on when `sticky`, else only the next one. Replaces an
  // earlier fault on the same op.
  void inject(Op op, int error, int after_calls = 0, bool sticky = true);
  void clear_fault(Op op);
  void clear_faults();
  // Calls of `op` so far, failed ones included; and the failed ones.
  uint64_t calls(Op op) const;
  uint64_t failures(Op op) const;

  // Holding a call: from hold(op) until release(op), calls of `op` (only
  // kSyncMapped, kSync and kWrite) block before they do anything, so a
  // held sync has made nothing durable yet; a test thus keeps a flush in
  // flight while it checks what producers do meanwhile. await_held() waits
  // (on a condition, at most `limit` of real time) until `calls` calls of
  // `op` are blocked in it now; false if they never were.
  // A call held for kHoldLimit of real time fails the running test and goes
  // on, as does every call of `op` after it: a test that stops at a failed
  // REQUIRE before its release() then reports that failure instead of
  // hanging in the destructors that join its threads.
  static constexpr std::chrono::seconds kHoldLimit{60};
  void hold(Op op);
  void release(Op op);
  bool await_held(Op op, size_t calls = 1,
                  std::chrono::seconds limit = std::chrono::seconds(30)) const;

  // File::prefault_mapped() calls so far (a hint: they change nothing here).
  struct Prefault {
    std::string path;
    uint64_t offset = 0, length = 0;
  };
  std::vector<Prefault> prefaults() const;

  // The power fails now (see the file comment). Idempotent.
  void pull_plug();
  bool plug_pulled() const;

  // What a reboot after a power loss finds, as a new file system with
  // everything durable and no faults: the loss at pull_plug() if it was
  // pulled, else now. Leaves this file system as it is. Deterministic for a
  // given `seed` (and the same contents), so it may be called several times,
  // with several modes, on one crashed state.
  // REQUIRES: nothing writes through a mapping of this file system any more.
  std::unique_ptr<FaultFileSystem> crash(CrashMode mode, uint64_t seed);

  // The permission bits a file or directory was created with (the umask
  // plays no part here); nullopt when `path` does not exist.
  std::optional<uint32_t> permissions(const std::string& path) const;

  // Paths of the files that exist now / would survive a crash, sorted.
  std::vector<std::string> files() const;
  std::vector<std::string> durable_files() const;

  // Direct I/O. direct_io_block_size() of any existing directory is
  // `block_size` from now on (a power of two; 4096 at first); 0 refuses
  // direct I/O as tmpfs does: direct_io_block_size() is kNotSupported and
  // opening kReadWriteDirect fails with EINVAL. crash() keeps the setting.
  Result<uint64_t> direct_io_block_size(const std::string& dir) override;
  void set_direct_io_block_size(uint64_t block_size);

 private:
  struct Node;
  class FaultFile;
  class FaultLock;
  struct Fault {
    bool armed = false;
    int error = 0;
    int successes_left = 0;
    bool sticky = true;
  };

  // Blocks while `op` is held. REQUIRES: mu_ not held.
  void wait_while_held(Op op);
  // Counts a call of `op` and returns the error it must fail with, if any.
  // REQUIRES: mu_ held.
  Status check_locked(Op op, const std::string& what);
  // Bytes the files may still grow by (set_space_limit). REQUIRES: mu_ held.
  uint64_t room_locked() const;

  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<Node>> files_;    // the namespace now
  std::map<std::string, std::shared_ptr<Node>> durable_;  // the namespace a crash keeps
  std::map<std::string, uint32_t> dirs_;  // and the permissions each was made with
  std::set<std::string> locked_;          // paths a FaultLock holds
  std::array<Fault, kOpCount> faults_{};
  std::array<uint64_t, kOpCount> calls_{};
  std::array<uint64_t, kOpCount> failures_{};
  bool plug_pulled_ = false;
  std::vector<Prefault> prefaults_;
  uint64_t direct_io_block_size_ = 4096;  // 0: no direct I/O
  uint64_t volume_bytes_ = uint64_t{1} << 30;
  std::optional<uint64_t> space_limit_;
  bool partial_growth_ = false;
  mutable std::mutex hold_mu_;
  mutable std::condition_variable hold_cv_;
  std::array<bool, kOpCount> held_{};       // guarded by hold_mu_
  std::array<size_t, kOpCount> holding_{};  // calls blocked now; guarded by hold_mu_
};

}  // namespace commitlog::testing
