// SPDX-License-Identifier: Apache-2.0
#include "tools/cli/base64.h"

#include <array>
#include <bit>
#include <cstdint>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace commitlog::tools {
namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// Every 12-bit value as its two base64 characters, first character in the
// low byte (the order they land in memory on a little-endian machine).
constexpr std::array<uint16_t, 4096> make_pairs() {
  std::array<uint16_t, 4096> pairs{};
  for (size_t v = 0; v < 4096; ++v) {
    pairs[v] = static_cast<uint16_t>(static_cast<unsigned char>(kAlphabet[v >> 6]) |
                                     static_cast<unsigned char>(kAlphabet[v & 63]) << 8);
  }
  return pairs;
}
constexpr std::array<uint16_t, 4096> kPairs = make_pairs();
static_assert(std::endian::native == std::endian::little, "kPairs assumes little-endian stores");

// Portable: six bytes at a time (eight loaded), then three, then the tail.
char* encode_scalar(const unsigned char* p, size_t n, char* out) {
  for (; n >= 8; n -= 6, p += 6, out += 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    word = __builtin_bswap64(word);  // the first byte in the top bits
    const uint64_t chars = uint64_t{kPairs[word >> 52]} | uint64_t{kPairs[(word >> 40) & 0xfff]} << 16 |
                           uint64_t{kPairs[(word >> 28) & 0xfff]} << 32 |
                           uint64_t{kPairs[(word >> 16) & 0xfff]} << 48;
    std::memcpy(out, &chars, 8);
  }
  for (; n >= 3; n -= 3, p += 3, out += 4) {
    const uint32_t group = uint32_t{p[0]} << 16 | uint32_t{p[1]} << 8 | p[2];
    const uint32_t chars = uint32_t{kPairs[group >> 12]} | uint32_t{kPairs[group & 0xfff]} << 16;
    std::memcpy(out, &chars, 4);
  }
  if (n > 0) {
    const uint32_t group = uint32_t{p[0]} << 16 | (n == 2 ? uint32_t{p[1]} << 8 : 0);
    out[0] = kAlphabet[group >> 18];
    out[1] = kAlphabet[(group >> 12) & 63];
    out[2] = n == 2 ? kAlphabet[(group >> 6) & 63] : '=';
    out[3] = '=';
    out += 4;
  }
  return out;
}

#if defined(__x86_64__)
// SSSE3: twelve bytes (sixteen loaded) to sixteen characters per step, after
// Wojciech Muła and Daniel Lemire, "Faster Base64 Encoding and Decoding Using
// AVX2 Instructions" (2018): split into 6-bit indices with two multiplies,
// then map each index range to its ASCII offset with one pshufb.
__attribute__((target("ssse3"))) char* encode_ssse3(const unsigned char* p, size_t n, char* out) {
  const __m128i shuffle = _mm_set_epi8(10, 11, 9, 10, 7, 8, 6, 7, 4, 5, 3, 4, 1, 2, 0, 1);
  // Index 0..25 -> 13, 26..51 -> 0, 52..61 -> 1..10, 62 -> 11, 63 -> 12.
  const __m128i offsets = _mm_setr_epi8('a' - 26, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52,
                                        '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '+' - 62,
                                        '/' - 63, 'A', 0, 0);
  for (; n >= 16; n -= 12, p += 12, out += 16) {
    __m128i in = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    in = _mm_shuffle_epi8(in, shuffle);
    const __m128i hi = _mm_mulhi_epu16(_mm_and_si128(in, _mm_set1_epi32(0x0fc0fc00)),
                                       _mm_set1_epi32(0x04000040));
    const __m128i lo = _mm_mullo_epi16(_mm_and_si128(in, _mm_set1_epi32(0x003f03f0)),
                                       _mm_set1_epi32(0x01000010));
    const __m128i indices = _mm_or_si128(hi, lo);
    __m128i range = _mm_subs_epu8(indices, _mm_set1_epi8(51));
    const __m128i letters = _mm_cmpgt_epi8(_mm_set1_epi8(26), indices);
    range = _mm_or_si128(range, _mm_and_si128(letters, _mm_set1_epi8(13)));
    const __m128i chars = _mm_add_epi8(_mm_shuffle_epi8(offsets, range), indices);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out), chars);
  }
  return encode_scalar(p, n, out);
}

const bool kHaveSsse3 = __builtin_cpu_supports("ssse3");
#endif

}  // namespace

char* base64_encode(std::span<const std::byte> in, char* out) {
  const auto* p = reinterpret_cast<const unsigned char*>(in.data());
#if defined(__x86_64__)
  if (kHaveSsse3) return encode_ssse3(p, in.size(), out);
#endif
  return encode_scalar(p, in.size(), out);
}

std::string base64(std::span<const std::byte> in) {
  std::string s(base64_size(in.size()), '\0');
  base64_encode(in, s.data());
  return s;
}

}  // namespace commitlog::tools
