// SPDX-License-Identifier: Apache-2.0
#include "segment/crypto/cipher.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <algorithm>
#include <atomic>
#include <climits>

namespace commitlog::crypto {
namespace {

const unsigned char* u(const std::byte* p) { return reinterpret_cast<const unsigned char*>(p); }
unsigned char* u(std::byte* p) { return reinterpret_cast<unsigned char*>(p); }
EVP_CIPHER_CTX* ctx(void* p) { return static_cast<EVP_CIPHER_CTX*>(p); }

// One RFC 3394 wrap or unwrap: the input, the output and its expected size.
bool key_wrap(bool wrap, const Key& kek, std::span<const std::byte> in, std::span<std::byte> out) {
  EVP_CIPHER_CTX* c = EVP_CIPHER_CTX_new();
  if (c == nullptr) return false;
  int n = 0, tail = 0;
  EVP_CIPHER_CTX_set_flags(c, EVP_CIPHER_CTX_FLAG_WRAP_ALLOW);  // needed before OpenSSL 3
  const bool ok = EVP_CipherInit_ex(c, EVP_aes_256_wrap(), nullptr, u(kek.data()), nullptr, wrap ? 1 : 0) == 1 &&
                  EVP_CipherUpdate(c, u(out.data()), &n, u(in.data()), static_cast<int>(in.size())) == 1 &&
                  EVP_CipherFinal_ex(c, u(out.data()) + n, &tail) == 1 &&
                  static_cast<size_t>(n + tail) == out.size();
  EVP_CIPHER_CTX_free(c);
  return ok;
}

// GCM encryption with the key schedule `c` holds, in three steps.
bool start_with(EVP_CIPHER_CTX* c, std::span<const std::byte, kNonceSize> nonce, std::span<const std::byte> aad) {
  int n = 0;
  return c != nullptr && aad.size() <= INT_MAX &&
         EVP_EncryptInit_ex(c, nullptr, nullptr, nullptr, u(nonce.data())) == 1 &&
         EVP_EncryptUpdate(c, nullptr, &n, u(aad.data()), static_cast<int>(aad.size())) == 1;
}

bool next_with(EVP_CIPHER_CTX* c, std::span<const std::byte> in, std::byte* out) {
  int n = 0;
  return c != nullptr && in.size() <= INT_MAX &&
         EVP_EncryptUpdate(c, u(out), &n, u(in.data()), static_cast<int>(in.size())) == 1 &&
         static_cast<size_t>(n) == in.size();
}

bool finish_with(EVP_CIPHER_CTX* c, std::byte* tag) {
  unsigned char none[1];
  int n = 0;
  return c != nullptr && EVP_EncryptFinal_ex(c, none, &n) == 1 && n == 0 &&
         EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_GET_TAG, static_cast<int>(kTagSize), u(tag)) == 1;
}

bool seal_with(EVP_CIPHER_CTX* c, std::span<const std::byte, kNonceSize> nonce, std::span<const std::byte> aad,
               std::span<const std::byte> in, std::byte* out, std::byte* tag) {
  return start_with(c, nonce, aad) && next_with(c, in, out) && finish_with(c, tag);
}

// One thread's encryption context for SharedSealer, and the sealer whose
// key it holds.
struct ThreadContext {
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  uint64_t serial = 0;
  ~ThreadContext() { EVP_CIPHER_CTX_free(ctx); }  // cleanses the key schedule
};

std::atomic<uint64_t> next_sealer_serial{1};

}  // namespace

std::optional<Key> random_key() {
  Key key;
  if (RAND_bytes(u(key.data()), static_cast<int>(key.size())) != 1) return std::nullopt;
  return key;
}

std::optional<Wrapped> wrap_key(const Key& kek, const Key& key) {
  Wrapped out;
  if (!key_wrap(true, kek, key, out)) return std::nullopt;
  return out;
}

std::optional<Key> unwrap_key(const Key& kek, const Wrapped& wrapped) {
  Key key;
  if (!key_wrap(false, kek, wrapped, key)) {
    OPENSSL_cleanse(key.data(), key.size());
    return std::nullopt;
  }
  return key;
}

// The contexts hold the expanded key; a failed allocation or init leaves
// them null, and every call then fails rather than use no key.
Gcm::Gcm(const Key& key) {
  EVP_CIPHER_CTX* e = EVP_CIPHER_CTX_new();
  EVP_CIPHER_CTX* d = EVP_CIPHER_CTX_new();
  if (e != nullptr && EVP_EncryptInit_ex(e, EVP_aes_256_gcm(), nullptr, u(key.data()), nullptr) == 1) enc_ = e;
  else EVP_CIPHER_CTX_free(e);
  if (d != nullptr && EVP_DecryptInit_ex(d, EVP_aes_256_gcm(), nullptr, u(key.data()), nullptr) == 1) dec_ = d;
  else EVP_CIPHER_CTX_free(d);
}

Gcm::~Gcm() {
  EVP_CIPHER_CTX_free(ctx(enc_));  // cleanses the key schedule
  EVP_CIPHER_CTX_free(ctx(dec_));
}

bool Gcm::seal(std::span<const std::byte, kNonceSize> nonce, std::span<const std::byte> aad,
               std::span<std::byte> data, std::byte* tag) {
  return seal_with(ctx(enc_), nonce, aad, data, data.data(), tag);
}

SharedSealer::SharedSealer(const Key& key)
    : key_(key), serial_(next_sealer_serial.fetch_add(1, std::memory_order_relaxed)) {}

SharedSealer::~SharedSealer() { OPENSSL_cleanse(key_.data(), key_.size()); }

// The calling thread's context, keyed with this sealer's key; null when
// libcrypto failed.
void* SharedSealer::context() const {
  thread_local ThreadContext mine;
  if (mine.ctx == nullptr) return nullptr;
  if (mine.serial != serial_) {
    mine.serial = 0;
    if (EVP_EncryptInit_ex(mine.ctx, EVP_aes_256_gcm(), nullptr, u(key_.data()), nullptr) != 1) return nullptr;
    mine.serial = serial_;
  }
  return mine.ctx;
}

bool SharedSealer::seal(std::span<const std::byte, kNonceSize> nonce, std::span<const std::byte> aad,
                        std::span<const std::byte> in, std::byte* out, std::byte* tag) const {
  return seal_with(ctx(context()), nonce, aad, in, out, tag);
}

bool SharedSealer::start(std::span<const std::byte, kNonceSize> nonce, std::span<const std::byte> aad) const {
  return start_with(ctx(context()), nonce, aad);
}

bool SharedSealer::next(std::span<const std::byte> in, std::byte* out) const {
  return next_with(ctx(context()), in, out);
}

bool SharedSealer::finish(std::byte* tag) const { return finish_with(ctx(context()), tag); }

bool Gcm::open(std::span<const std::byte, kNonceSize> nonce, std::span<const std::byte> aad,
               std::span<const std::byte> in, std::byte* out, const std::byte* tag) {
  EVP_CIPHER_CTX* c = ctx(dec_);
  if (c == nullptr || in.size() > INT_MAX) return false;
  int n = 0;
  // The tag is only read: libcrypto's ctrl takes a non-const pointer.
  unsigned char expected[kTagSize];
  std::copy(u(tag), u(tag) + kTagSize, expected);
  return EVP_DecryptInit_ex(c, nullptr, nullptr, nullptr, u(nonce.data())) == 1 &&
         EVP_DecryptUpdate(c, nullptr, &n, u(aad.data()), static_cast<int>(aad.size())) == 1 &&
         EVP_DecryptUpdate(c, u(out), &n, u(in.data()), static_cast<int>(in.size())) == 1 &&
         EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_TAG, static_cast<int>(kTagSize), expected) == 1 &&
         EVP_DecryptFinal_ex(c, u(out) + n, &n) == 1;
}

}  // namespace commitlog::crypto
