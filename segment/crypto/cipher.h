// SPDX-License-Identifier: Apache-2.0
// The ciphers of encrypted segments, on libcrypto (the only file that
// includes it): random data keys, their wrapping under a master key
// (RFC 3394 AES-256 key wrap) and AES-256-GCM for sections.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "commitlog/key_provider.h"

namespace commitlog::crypto {

inline constexpr size_t kKeySize = 32;
inline constexpr size_t kWrappedSize = kKeySize + 8;
inline constexpr size_t kNonceSize = 12;
inline constexpr size_t kTagSize = 16;
using Key = MasterKey;
using Wrapped = std::array<std::byte, kWrappedSize>;

// A key from the system's CSPRNG; nullopt when it has none to give.
std::optional<Key> random_key();
// `key` wrapped by `kek`; nullopt only when libcrypto fails.
std::optional<Wrapped> wrap_key(const Key& kek, const Key& key);
// The key `wrapped` holds, when `kek` is the key that wrapped it (the wrap's
// integrity check holds); nullopt for any other kek or damaged bytes.
std::optional<Key> unwrap_key(const Key& kek, const Wrapped& wrapped);

// AES-256-GCM encryption under one key by any number of threads at once:
// the producers of a segment with sealed entries, each sealing its own.
// Each thread seals with a libcrypto context of its own, keyed again when
// it last sealed under another sealer's key; it holds that key schedule
// until then, or until the thread ends (keys in memory are outside the
// threat model, docs/encryption.md).
class SharedSealer {
 public:
  explicit SharedSealer(const Key& key);
  ~SharedSealer();
  SharedSealer(const SharedSealer&) = delete;
  SharedSealer& operator=(const SharedSealer&) = delete;
  // Encrypts `in` to `out` (the same size) and writes the kTagSize-byte tag
  // to `tag`. False only when libcrypto fails.
  [[nodiscard]] bool seal(std::span<const std::byte, kNonceSize> nonce, std::span<const std::byte> aad,
                          std::span<const std::byte> in, std::byte* out, std::byte* tag) const;
  // seal() in pieces, for an input stored as it is sealed: start(), then
  // next() over the input's pieces in order, each encrypted to `out` (the
  // same size), then finish(). The calling thread seals nothing else in
  // between. False only when libcrypto fails.
  [[nodiscard]] bool start(std::span<const std::byte, kNonceSize> nonce, std::span<const std::byte> aad) const;
  [[nodiscard]] bool next(std::span<const std::byte> in, std::byte* out) const;
  [[nodiscard]] bool finish(std::byte* tag) const;

 private:
  void* context() const;  // EVP_CIPHER_CTX

  Key key_;
  const uint64_t serial_;  // unique among sealers: which key a thread's context holds
};

// AES-256-GCM under one key, for one thread at a time. The key schedule is
// made once; each call takes its own nonce, which must never repeat under
// the key (the caller's job: segment/codec.h builds them).
class Gcm {
 public:
  explicit Gcm(const Key& key);
  ~Gcm();
  Gcm(const Gcm&) = delete;
  Gcm& operator=(const Gcm&) = delete;
  // Encrypts `data` in place and writes the kTagSize-byte tag to `tag`.
  // False only when libcrypto fails.
  [[nodiscard]] bool seal(std::span<const std::byte, kNonceSize> nonce, std::span<const std::byte> aad,
                          std::span<std::byte> data, std::byte* tag);
  // Decrypts `data` from `in` to `out` (the same size; may be the same
  // bytes) and checks `tag`: false when the tag does not hold (another key,
  // nonce or associated data, or damaged bytes), and `out` is then garbage
  // the caller must not hand out.
  [[nodiscard]] bool open(std::span<const std::byte, kNonceSize> nonce, std::span<const std::byte> aad,
                          std::span<const std::byte> in, std::byte* out, const std::byte* tag);

 private:
  void* enc_ = nullptr;  // EVP_CIPHER_CTX
  void* dec_ = nullptr;
};

}  // namespace commitlog::crypto
