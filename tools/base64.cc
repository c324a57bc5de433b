#include "tools/base64.h"

#include <array>
#include <cstdint>
#include <bit>
#include <cstring>

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

}  // namespace

char* base64_encode(std::span<const std::byte> in, char* out) {
  const auto* p = reinterpret_cast<const unsigned char*>(in.data());
  size_t n = in.size();
  // Six bytes at a time (eight loaded, two ignored): four 12-bit lookups.
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

std::string base64(std::span<const std::byte> in) {
  std::string s(base64_size(in.size()), '\0');
  base64_encode(in, s.data());
  return s;
}

}  // namespace commitlog::tools
