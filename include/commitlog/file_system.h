// SPDX-License-Identifier: Apache-2.0
// Public API. The injectable file-system interface. Every byte the library reads or writes
// goes through it, so tests can substitute an in-memory or fault-injecting
// implementation (tests/support/) that drops unsynced data, tears writes and
// fails syncs.
//
// Thread-safety: a FileSystem may be used from any thread. A File may be used
// from several threads as long as they touch disjoint byte ranges; map() is
// called once per file.
//
// Direct I/O: a File opened OpenMode::kReadWriteDirect moves bytes between
// the caller's buffer and the device without the page cache (O_DIRECT).
// REQUIRES of each write_at(), write_at_durable() and read_at() on it: the
// offset, the length and the buffer's address are multiples of
// FileSystem::direct_io_block_size() of the file's directory; a call that
// breaks this fails with EINVAL and writes nothing. map() on it fails. A
// direct write that returned is not durable: until sync() returns, a power
// loss may keep it or not (the device's write cache, and for blocks never
// written before the file system's record of them), so direct I/O takes a
// sync() or write_at_durable() like buffered writes do.
//
// Permissions: what open(kCreateNew) and create_dirs() make gets the
// permission bits they are given, less the process umask (so a stricter
// umask wins); by default the owner's alone, since segments hold every
// mutation in the clear.
//
// Locks: lock() is how a log makes itself the one owner of its directory
// (commitlog/commit_log.h); lock_holder() is how a reader learns that a
// writer is live without disturbing it.
#pragma once

// One clear message instead of a page of errors from C++20 library features.
#if __cplusplus < 202002L
#error "commitlog needs C++20: compile with -std=c++20 or later"
#else

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "commitlog/export.h"
#include "commitlog/status.h"

namespace commitlog {

inline constexpr uint32_t kDefaultFilePermissions = 0600;
inline constexpr uint32_t kDefaultDirectoryPermissions = 0700;

class COMMITLOG_EXPORT File {
 public:
  virtual ~File() = default;  // unmaps and closes

  // Reserves [offset, offset + length) on disk without changing visible data.
  virtual Status allocate(uint64_t offset, uint64_t length) = 0;
  // Maps the first `length` bytes shared and writable. The mapping lives as
  // long as this File; map() may be called at most once.
  virtual Result<std::byte*> map(uint64_t length) = 0;
  // Makes [offset, offset + length) of the mapping durable (msync MS_SYNC).
  virtual Status sync_mapped(uint64_t offset, uint64_t length) = 0;
  // A hint: maps the pages that lie wholly inside [offset, offset + length)
  // of the mapping writable now (MADV_POPULATE_WRITE), so that writes there
  // take no page fault. The bytes are unchanged; safe while other threads
  // write the range. Does nothing where unsupported.
  virtual void prefault_mapped(uint64_t /*offset*/, uint64_t /*length*/) {}
  // Writes all of `data` at `offset` (pwrite, retried on short writes).
  virtual Status write_at(uint64_t offset, std::span<const std::byte> data) = 0;
  // Writes all of `pieces`, one after another, from `offset` in one call
  // (pwritev), so that they reach the device as one write. Direct I/O: each
  // piece as write_at() requires. The default calls write_at() for each.
  virtual Status write_gathered_at(uint64_t offset, std::span<const std::span<const std::byte>> pieces);
  // Writes all of `data` at `offset` and returns once those bytes, and what
  // reading them back needs (the file size they extend to), are durable
  // (pwritev2 with RWF_DSYNC). Says nothing of other writes not yet synced:
  // they may or may not become durable with it. The default is write_at()
  // then sync().
  virtual Status write_at_durable(uint64_t offset, std::span<const std::byte> data);
  // Writes all of `data` at `offset`, as write_at() does, while the caller
  // is still producing it (encrypting it, say): `data` goes in pieces of
  // `piece` bytes (the last may be shorter), and before a piece is written
  // `fill(end)` is called to make data[0, end) final, `end` being that
  // piece's end. A file may write one piece while the next is filled (the
  // POSIX file system's direct files do, with asynchronous I/O); the default
  // fills and writes one piece after another. A `fill` that returns false
  // stops the write: the call returns an error, having written some pieces
  // or none, and no write is in flight once it returns. Direct I/O: `piece`
  // is a multiple of the block size and each piece as write_at() requires.
  virtual Status write_filled_at(uint64_t offset, std::span<const std::byte> data, size_t piece,
                                 const std::function<bool(size_t end)>& fill);
  // Reads up to out.size() bytes at `offset`; returns how many were read
  // (fewer only at the end of the file).
  virtual Result<size_t> read_at(uint64_t offset, std::span<std::byte> out) = 0;
  // Makes written data durable (fdatasync).
  virtual Status sync() = 0;
  virtual Result<uint64_t> size() = 0;
  // Sets the file's size (ftruncate); the new size is durable once sync()
  // returns. Shrinking frees space, so it works on a full disk too. The
  // default: kNotSupported.
  virtual Status truncate(uint64_t size);
};

// An exclusive lock on a file, taken by FileSystem::lock() and held until
// this object is destroyed.
class COMMITLOG_EXPORT FileLock {
 public:
  virtual ~FileLock() = default;  // releases the lock
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

  // The locked file, as lock() was given it.
  const std::string& path() const { return path_; }

 protected:
  explicit FileLock(std::string path) : path_(std::move(path)) {}

 private:
  std::string path_;
};

enum class OpenMode {
  kRead,          // existing file, read only
  kCreateNew,     // new file, read-write; fails if it exists
  kReadWrite,     // existing file, read-write
  kReadWriteDirect,  // existing file, read-write, direct I/O (see the file comment)
};

class COMMITLOG_EXPORT FileSystem {
 public:
  virtual ~FileSystem() = default;

  // Opens `path`; a file kCreateNew creates gets `permissions` (see the
  // file comment), which the other modes ignore.
  virtual Result<std::unique_ptr<File>> open(const std::string& path, OpenMode mode,
                                             uint32_t permissions) = 0;
  Result<std::unique_ptr<File>> open(const std::string& path, OpenMode mode) {
    return open(path, mode, kDefaultFilePermissions);
  }
  virtual Status rename(const std::string& from, const std::string& to) = 0;
  virtual Status remove(const std::string& path) = 0;
  // Names (not paths) of the entries of `dir`, in no particular order.
  virtual Result<std::vector<std::string>> list(const std::string& dir) = 0;
  // Creates `dir` and its parents when missing, each it creates with
  // `permissions`; leaves existing ones as they are.
  virtual Status create_dirs(const std::string& dir, uint32_t permissions) = 0;
  Status create_dirs(const std::string& dir) {
    return create_dirs(dir, kDefaultDirectoryPermissions);
  }
  // Makes the directory's entries (creates, renames, removes) durable.
  virtual Status sync_dir(const std::string& dir) = 0;
  virtual bool exists(const std::string& path) = 0;
  virtual bool is_directory(const std::string& path) = 0;
  // The alignment direct I/O needs for files in `dir`: the logical block size
  // of the device behind it, at least 4096, a power of two. kNotSupported
  // naming `dir` when its file system cannot write past the page cache to a
  // device (tmpfs, or no O_DIRECT). May create a file in `dir` to find out;
  // leaves none behind. The default: kNotSupported.
  virtual Result<uint64_t> direct_io_block_size(const std::string& dir);
  // Gives the file at `from` a second name `to` (a hard link), durable like a
  // create: with sync_dir() of `to`'s directory. Fails if `to` exists. The
  // default: kNotSupported.
  virtual Status link(const std::string& from, const std::string& to);
  // The size in bytes of the volume holding `dir` (statvfs). The default:
  // kNotSupported.
  virtual Result<uint64_t> volume_bytes(const std::string& dir);
  // How many names the file `path` has (st_nlink): more than one while a hard
  // link made by CDC or an archive command still holds it. The default:
  // kNotSupported, and the log then never reuses a segment's file.
  virtual Result<uint64_t> link_count(const std::string& path);
  // The permission bits of the file `path` (stat's mode & 07777), for files
  // that must not be readable by others (key files). The default:
  // kNotSupported.
  virtual Result<uint32_t> permission_bits(const std::string& path);

  // Takes an exclusive lock on the file `path`, created with `permissions`
  // when missing, without waiting: kBusy when it is held already, by
  // another process or by an earlier lock() in this one that is still held.
  // The lock ends with the returned object, or with the process (kill -9
  // too). POSIX: an open-file-description lock (fcntl F_OFD_SETLK) on a
  // descriptor of its own; once it holds the lock it writes the caller's
  // process id into the file, for lock_holder(), and the file stays after
  // the lock ends, naming the last holder. The default: a lock in this
  // process's memory, per file system object and path, that makes no file
  // and that other processes do not see.
  virtual Result<std::unique_ptr<FileLock>> lock(const std::string& path, uint32_t permissions);
  Result<std::unique_ptr<FileLock>> lock(const std::string& path) {
    return lock(path, kDefaultFilePermissions);
  }
  // Whether the file `path` is locked by a lock() now, without taking the
  // lock or writing anything: nullopt when it is not (or does not exist),
  // else the holder's process id as the file names it, 0 when it names
  // none. The default answers for the default lock().
  virtual Result<std::optional<int64_t>> lock_holder(const std::string& path);
};

// The real file system (POSIX). Never null; lives for the whole process.
COMMITLOG_EXPORT FileSystem* posix_file_system();

// Reads a whole file through `fs`.
COMMITLOG_EXPORT Result<std::vector<std::byte>> read_whole_file(FileSystem& fs, const std::string& path);
// The same into `*out`, reusing its memory: reading many files through one
// buffer saves a fresh allocation (page faults, zeroing) per file.
COMMITLOG_EXPORT Status read_whole_file(FileSystem& fs, const std::string& path, std::vector<std::byte>* out);

}  // namespace commitlog

#endif  // C++20
