// SPDX-License-Identifier: Apache-2.0
// Public API. Master keys for encryption at rest (docs/encryption.md).
//
// Each encrypted segment gets a random data key of its own, stored in the
// segment wrapped by one master key together with that key's id; a
// KeyProvider hands out master keys by id. New segments use the active key;
// a segment stays readable while its provider still holds the key it names,
// so keys rotate by adding a new one and keeping the old ones until no
// segment needs them (`commitlog stat` lists the ids a log still needs).
//
// Thread-safety: a provider is read from any thread and never changes after
// it is made.
#pragma once

// One clear message instead of a page of errors from C++20 library features.
#if __cplusplus < 202002L
#error "commitlog needs C++20: compile with -std=c++20 or later"
#else

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "commitlog/export.h"
#include "commitlog/file_system.h"
#include "commitlog/status.h"

namespace commitlog {

// An AES-256 key.
using MasterKey = std::array<std::byte, 32>;

// Called from any thread, the log's own included: thread-safe, and reports
// failure by its Results, never by throwing (an exception there ends the
// process).
class COMMITLOG_EXPORT KeyProvider {
 public:
  virtual ~KeyProvider() = default;
  // The id of the key new segments are wrapped with.
  virtual uint32_t active_key_id() const = 0;
  // The key `id`: kNotFound naming the id when the provider does not hold it.
  virtual Result<MasterKey> key(uint32_t id) const = 0;
  // Every id it holds, ascending.
  virtual std::vector<uint32_t> key_ids() const = 0;
  // Where the keys come from, for messages and for printing the
  // configuration: the built-in provider's key file path.
  virtual std::string source() const = 0;
};

// The built-in provider: master keys from the file `path`, one per line as
// `<id> <64 hex digits>` (id a decimal u32), blank lines and lines starting
// with '#' ignored. The file must belong to its reader alone: a mode with any
// group or other bit is refused, naming the file and its mode, and so is a
// malformed line, a repeated id or a file without keys. `active`: the id new
// segments use (Cassandra's key_alias), which must be in the file; unset:
// the highest id.
COMMITLOG_EXPORT Result<std::shared_ptr<const KeyProvider>> load_key_file(
    const std::string& path, std::optional<uint32_t> active = std::nullopt,
    FileSystem& fs = *posix_file_system());

}  // namespace commitlog

#endif  // C++20
